// Tensor cores through warp-level mma.sync (inline PTX):
//   fp16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 (4096 FLOP per mma)
//   int8: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32   (8192 OP per mma)
// Latency: one warp, chain of mma on the same accumulator.
// Throughput: one block (one SM) of W warps, each with ILP independent
// accumulators; SM cycles between barriers. Warps map to the 4 sub-partitions
// round-robin, so the issue interval per sub-partition is
// cycles / (mma per warp * W / min(W,4)) for W a multiple of 4 (or W <= 4).
// ldmatrix.x4 latency: one warp, chain where each address adds the loaded
// (zero) value; compared against the same chain built from ld.shared.u32.
#include "common.cuh"

__device__ __forceinline__ void mma_s8(int* d, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int TYPE, int ILP>
__global__ void mma_kernel(int iters, Stamp* st, float* sink, int flag) {
  unsigned lane = threadIdx.x & 31;
  unsigned a[4], b[2];
  // small nonzero values: fp16 ~0.01 pattern / int8 small ints
  for (int i = 0; i < 4; i++) a[i] = TYPE == 0 ? (0x211f2120u + lane + i) : (0x01020301u + lane * 0x010101u + i);
  for (int i = 0; i < 2; i++) b[i] = TYPE == 0 ? (0x20212122u + lane * 3 + i) : (0x02010103u + lane + i);
  float df[ILP][4];
  int di[ILP][4];
#pragma unroll
  for (int j = 0; j < ILP; j++)
#pragma unroll
    for (int k = 0; k < 4; k++) { df[j][k] = 0.f; di[j][k] = 0; }
  __syncthreads();
  long long c0 = clk();
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int u = 0; u < 8; u++)
#pragma unroll
      for (int j = 0; j < ILP; j++) {
        if (TYPE == 0) mma_f16(df[j], a, b);
        else mma_s8(di[j], a, b);
      }
  }
  __syncthreads();
  long long c1 = clk();
  if (threadIdx.x == 0) st[0] = {c0, c1, 0, 0, smid(), 0};
  if (flag) {
    float s = 0;
#pragma unroll
    for (int j = 0; j < ILP; j++)
#pragma unroll
      for (int k = 0; k < 4; k++) s += df[j][k] + (float)di[j][k];
    sink[threadIdx.x] = s;
  }
}

template <int LDM>
__global__ void ldm_chain(int iters, Stamp* st, unsigned* sink) {
  __shared__ __align__(16) unsigned s[2048];
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) s[i] = 0;
  __syncwarp();
  unsigned lane = threadIdx.x & 31;
  unsigned addr = (unsigned)__cvta_generic_to_shared(s) + lane * 16;
  unsigned x = 0;
  long long c0 = clk();
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int u = 0; u < 16; u++) {
      unsigned r0, r1, r2, r3;
      if (LDM) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
        x ^= r1 ^ r2 ^ r3;
      } else {
        asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(r0) : "r"(addr));
      }
      addr += r0;
    }
  }
  long long c1 = clk();
  if (threadIdx.x == 0) st[0] = {c0, c1, 0, 0, smid(), 0};
  sink[threadIdx.x] = addr ^ x;
}

static Stamp* g_st;
static float* g_sink;
static double cyc() {
  CKL();
  Stamp s;
  CK(cudaMemcpy(&s, g_st, sizeof s, cudaMemcpyDeviceToHost));
  return (double)(s.c1 - s.c0);
}

template <int TYPE, int ILP>
static double run(int warps, int iters) {
  std::vector<double> v;
  for (int k = 0; k < 5; k++) {
    mma_kernel<TYPE, ILP><<<1, warps * 32>>>(iters, g_st, g_sink, 0);
    v.push_back(cyc());
  }
  return median(v);
}

template <int TYPE>
static void topic(const char* name, double ops_per_mma, Json& r) {
  const int IT = 256;
  // latency: one warp, one accumulator
  double lat = run<TYPE, 1>(1, IT) / (IT * 8.0);
  r.num(std::string(name) + "_mma_dependent_latency_cycles", lat);
  std::vector<std::string> rows;
  double best = 0;
  for (int w : {1, 2, 4, 8, 12, 16}) {
    double c = run<TYPE, 8>(w, IT);
    double mmas = (double)w * IT * 8 * 8;
    double per_sp = mmas / std::min(w, 4);
    double opc = mmas * ops_per_mma / c;
    best = std::max(best, opc);
    rows.push_back(Json().num("warps", w).num("ilp", 8).num("mma_per_cycle_per_sm", mmas / c)
                       .num("ops_per_cycle_per_sm", opc)
                       .num("issue_interval_cycles_per_mma_per_subpartition", c / per_sp).dump());
  }
  for (int ilp : {1, 2, 4}) {
    double c = ilp == 1 ? run<TYPE, 1>(4, IT) : ilp == 2 ? run<TYPE, 2>(4, IT) : run<TYPE, 4>(4, IT);
    double mmas = 4.0 * IT * 8 * ilp;
    rows.push_back(Json().num("warps", 4).num("ilp", ilp).num("mma_per_cycle_per_sm", mmas / c)
                       .num("ops_per_cycle_per_sm", mmas * ops_per_mma / c)
                       .num("issue_interval_cycles_per_mma_per_subpartition", c / (mmas / 4)).dump());
  }
  r.raw(std::string(name) + "_mma_throughput", jarr(rows));
  r.num(std::string(name) + "_mma_peak_ops_per_cycle_per_sm", best);
  r.num(std::string(name) + "_mma_min_issue_interval_cycles_per_subpartition",
        4.0 * ops_per_mma / best);
}

int main() {
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&g_st, sizeof(Stamp)));
  CK(cudaMalloc(&g_sink, 4096 * 4));
  Json r, m;
  topic<0>("f16_m16n8k16_f32acc", 2.0 * 16 * 8 * 16, r);
  topic<1>("s8_m16n8k32_s32acc", 2.0 * 16 * 8 * 32, r);
  std::vector<double> a, b;
  for (int k = 0; k < 5; k++) {
    ldm_chain<1><<<1, 32>>>(256, g_st, (unsigned*)g_sink);
    a.push_back(cyc() / (256 * 16.0));
    ldm_chain<0><<<1, 32>>>(256, g_st, (unsigned*)g_sink);
    b.push_back(cyc() / (256 * 16.0));
  }
  r.num("ldmatrix_x4_plus_iadd_chain_cycles", median(a))
      .num("lds32_plus_iadd_chain_cycles", median(b))
      .num("ldmatrix_x4_minus_lds32_extra_latency_cycles", median(a) - median(b));
  m.str("mma_latency", "1 warp, 2048 mma.sync on one accumulator (each needs the previous "
                       "result), clock64 cycles / count, median of 5")
      .str("mma_throughput", "1 block (one SM) of W warps, each warp ILP independent "
                             "accumulators x 8 unrolled x 256 iterations, same A/B fragments; "
                             "SM cycles between barriers; ops = 2*M*N*K per mma; issue "
                             "interval per sub-partition assumes warps spread round-robin over "
                             "4 sub-partitions; median of 5")
      .str("ldmatrix", "1 warp, chain addr += r0 after ldmatrix.sync.m8n8.x4.b16 (shared "
                       "memory holds zeros), compared with the same chain using "
                       "ld.shared.u32; add shared_load_latency_cycles (latency topic) to the "
                       "difference for the ldmatrix load-to-use latency");
  emit("tensor_core_mma", r, m);
  return 0;
}
