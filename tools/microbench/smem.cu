// Shared memory bandwidth per SM and bank-conflict cost.
//  bandwidth: one block of 1024 threads on one SM, unrolled ld.volatile.shared
//    (32-, 64-, 128-bit, consecutive lanes -> consecutive elements, conflict
//    free); bytes / clock64 cycles of the block.
//  conflicts: lane l reads word l*n (n-way conflict for n = 1..32 with 32 banks
//    of 4 bytes). Throughput: 32 warps each issuing independent loads, SM
//    cycles per warp-wide load. Latency: one warp, dependent chain (the word
//    at address a holds a), cycles per load.
#include "common.cuh"

#define U 16
template <int W>  // bytes per thread per load: 4, 8, 16
__global__ void bw(int iters, Stamp* st, unsigned* sink, int flag) {
  __shared__ __align__(16) unsigned s[8192];  // 32 KB
  for (int i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = i * 2654435761u;
  __syncthreads();
  unsigned base = (unsigned)__cvta_generic_to_shared(s) + threadIdx.x * W;
  unsigned acc = 0;
  long long c0 = clk();
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int k = 0; k < U; k++) {
      unsigned a = base + ((k * 1024 * W) & 32767);
      if (W == 4) {
        unsigned v;
        asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(a));
        acc ^= v;
      } else if (W == 8) {
        unsigned v0, v1;
        asm volatile("ld.volatile.shared.v2.u32 {%0,%1}, [%2];" : "=r"(v0), "=r"(v1) : "r"(a));
        acc ^= v0 ^ v1;
      } else {
        unsigned v0, v1, v2, v3;
        asm volatile("ld.volatile.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "r"(a));
        acc ^= v0 ^ v1 ^ v2 ^ v3;
      }
    }
  }
  __syncthreads();
  long long c1 = clk();
  if (threadIdx.x == 0) st[0] = {c0, c1, 0, 0, smid(), 0};
  if (flag) sink[threadIdx.x] = acc;
}

__global__ void conflict_tp(int n, int iters, Stamp* st, unsigned* sink, int flag) {
  __shared__ unsigned s[32 * 33];
  for (int i = threadIdx.x; i < 32 * 33; i += blockDim.x) s[i] = i;
  __syncthreads();
  int lane = threadIdx.x & 31;
  unsigned a = (unsigned)__cvta_generic_to_shared(s) + (n == 0 ? 0 : lane * n * 4);
  unsigned acc = 0;
  __syncthreads();
  long long c0 = clk();
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int k = 0; k < U; k++) {
      unsigned v;
      asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(a));
      acc += v;
    }
  }
  __syncthreads();
  long long c1 = clk();
  if (threadIdx.x == 0) st[0] = {c0, c1, 0, 0, smid(), 0};
  if (flag) sink[threadIdx.x] = acc;
}

__global__ void conflict_lat(int n, int iters, Stamp* st, unsigned* sink) {
  __shared__ unsigned s[32 * 33];
  unsigned base = (unsigned)__cvta_generic_to_shared(s);
  for (int i = threadIdx.x; i < 32 * 33; i += blockDim.x) s[i] = base + i * 4;
  __syncwarp();
  int lane = threadIdx.x & 31;
  unsigned p = base + (n == 0 ? 0 : lane * n * 4);
  long long c0 = clk();
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int k = 0; k < U; k++) asm volatile("ld.volatile.shared.u32 %0, [%0];" : "+r"(p));
  }
  long long c1 = clk();
  if (threadIdx.x == 0) st[0] = {c0, c1, 0, 0, smid(), 0};
  sink[threadIdx.x] = p;
}

static Stamp* g_st;
static unsigned* g_sink;
static double cyc() {
  CKL();
  Stamp s;
  CK(cudaMemcpy(&s, g_st, sizeof s, cudaMemcpyDeviceToHost));
  return (double)(s.c1 - s.c0);
}

int main() {
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&g_st, sizeof(Stamp)));
  CK(cudaMalloc(&g_sink, 4096 * 4));
  Json r, m;
  const int T = 1024, IT = 2048;
  auto bwrun = [&](int W) {
    std::vector<double> v;
    for (int k = 0; k < 5; k++) {
      if (W == 4) bw<4><<<1, T>>>(IT, g_st, g_sink, 0);
      if (W == 8) bw<8><<<1, T>>>(IT, g_st, g_sink, 0);
      if (W == 16) bw<16><<<1, T>>>(IT, g_st, g_sink, 0);
      v.push_back((double)T * IT * U * W / cyc());
    }
    return median(v);
  };
  r.num("shared_bw_32bit_bytes_per_cycle_per_sm", bwrun(4));
  r.num("shared_bw_64bit_bytes_per_cycle_per_sm", bwrun(8));
  r.num("shared_bw_128bit_bytes_per_cycle_per_sm", bwrun(16));

  std::vector<std::string> rows;
  for (int n : {0, 1, 2, 4, 8, 16, 32}) {
    std::vector<double> tp, lat;
    int it = n >= 8 ? 128 : 512;
    for (int k = 0; k < 5; k++) {
      conflict_tp<<<1, T>>>(n, it, g_st, g_sink, 0);
      tp.push_back(cyc() / ((double)(T / 32) * it * U));
      conflict_lat<<<1, 32>>>(n, it, g_st, g_sink);
      lat.push_back(cyc() / ((double)it * U));
    }
    Json row;
    row.str("ways", n == 0 ? "broadcast" : std::to_string(n))
        .num("cycles_per_warp_access_throughput", median(tp))
        .num("latency_cycles_one_warp", median(lat));
    rows.push_back(row.dump());
    std::string key = n == 0 ? "broadcast" : std::to_string(n) + "way";
    r.num("bank_conflict_" + key + "_cycles_per_warp_access", median(tp));
    r.num("bank_conflict_" + key + "_latency_cycles", median(lat));
  }
  r.raw("bank_conflicts", jarr(rows));
  m.str("shared_bw", "1 block x 1024 threads on one SM, 2048 x 16 unrolled ld.volatile.shared "
                     "per thread, lanes on consecutive elements (conflict-free); bytes / "
                     "clock64 cycles between barriers; median of 5")
      .str("bank_conflicts", "lane l reads 32-bit word l*n (n-way conflict; 'broadcast' = all "
                             "lanes one word). cycles_per_warp_access = SM cycles / warp-wide "
                             "loads with 32 warps of independent loads; latency = one warp, "
                             "dependent chain (word at address a holds a); median of 5");
  emit("shared_memory", r, m);
  return 0;
}
