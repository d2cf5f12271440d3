// Hopper warpgroup MMA (wgmma.mma_async, sm_90a) with both operands in shared
// memory (matrix descriptors, no swizzle, K-major; the values are zeros unless
// stated: only the timing matters).
//   fp16: wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16, N = 64/128/256
//   int8: wgmma.mma_async.sync.aligned.m64nNk32.s32.s8.s8,   N = 128/256
// Throughput: one block (one SM) of 1-3 warpgroups; each warpgroup runs one
// accumulating chain: wgmma.fence, 4 wgmma, commit_group, wait_group 1 (one
// group of 4 stays in flight). SM cycles (clock64) between barriers.
// Latency: one warpgroup, fence / 1 wgmma / commit / wait_group 0 per step.
// Sustained: one block of 2 warpgroups per SM (120 KB of dynamic shared
// memory keeps it to one per SM), m64n256k16 chains for about 2 s: chip
// TFLOP/s from CUDA events, and each SM's clock = clock64 delta / globaltimer
// delta over the run (median over SMs). Right after each sustained run (same
// stream, no gap) a probe kernel (one thread per SM, no tensor work) measures
// the clock in consecutive 20 us windows: does the clock seen under tensor
// load persist once the tensor cores go idle?
// Build: -gencode arch=compute_90a,code=sm_90a.
#include <cstdint>
#include "common.cuh"

// Accumulator operand lists, 8 registers per macro.
#define F8(d, o)                                                              \
  "+f"(d[o + 0]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]), "+f"(d[o + 4]), \
      "+f"(d[o + 5]), "+f"(d[o + 6]), "+f"(d[o + 7])
#define I8(d, o)                                                              \
  "+r"(d[o + 0]), "+r"(d[o + 1]), "+r"(d[o + 2]), "+r"(d[o + 3]), "+r"(d[o + 4]), \
      "+r"(d[o + 5]), "+r"(d[o + 6]), "+r"(d[o + 7])

// D(64xN) += A(64xK) * B(KxN); A and B read through descriptors; scale-d = 1
// (accumulate), no negation, no transpose (both K-major).
template <int N> struct F16;
template <int N> struct S8;
template <> struct F16<64> {
  typedef float T;
  static constexpr int N = 64, K = 16, R = 32;
  __device__ static __forceinline__ void mma(T (&d)[R], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 0, 0;\n}\n"
        : F8(d, 0), F8(d, 8), F8(d, 16), F8(d, 24)
        : "l"(a), "l"(b), "r"(1));
  }
};
template <> struct F16<128> {
  typedef float T;
  static constexpr int N = 128, K = 16, R = 64;
  __device__ static __forceinline__ void mma(T (&d)[R], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 0;\n}\n"
        : F8(d, 0), F8(d, 8), F8(d, 16), F8(d, 24), F8(d, 32), F8(d, 40), F8(d, 48), F8(d, 56)
        : "l"(a), "l"(b), "r"(1));
  }
};
template <> struct F16<256> {
  typedef float T;
  static constexpr int N = 256, K = 16, R = 128;
  __device__ static __forceinline__ void mma(T (&d)[R], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, 0;\n}\n"
        : F8(d, 0), F8(d, 8), F8(d, 16), F8(d, 24), F8(d, 32), F8(d, 40), F8(d, 48), F8(d, 56), F8(d, 64), F8(d, 72), F8(d, 80), F8(d, 88), F8(d, 96), F8(d, 104), F8(d, 112), F8(d, 120)
        : "l"(a), "l"(b), "r"(1));
  }
};
template <> struct S8<128> {
  typedef int T;
  static constexpr int N = 128, K = 32, R = 64;
  __device__ static __forceinline__ void mma(T (&d)[R], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p;\n}\n"
        : I8(d, 0), I8(d, 8), I8(d, 16), I8(d, 24), I8(d, 32), I8(d, 40), I8(d, 48), I8(d, 56)
        : "l"(a), "l"(b), "r"(1));
  }
};
template <> struct S8<256> {
  typedef int T;
  static constexpr int N = 256, K = 32, R = 128;
  __device__ static __forceinline__ void mma(T (&d)[R], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p;\n}\n"
        : I8(d, 0), I8(d, 8), I8(d, 16), I8(d, 24), I8(d, 32), I8(d, 40), I8(d, 48), I8(d, 56), I8(d, 64), I8(d, 72), I8(d, 80), I8(d, 88), I8(d, 96), I8(d, 104), I8(d, 112), I8(d, 120)
        : "l"(a), "l"(b), "r"(1));
  }
};

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int K> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(K) : "memory");
}
// Keep the compiler from moving ordinary accesses of the accumulators across
// the wgmma fence / wait (emits no instruction).
template <int R> __device__ __forceinline__ void pin(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}
template <int R> __device__ __forceinline__ void pin(int (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; i++) asm volatile("" : "+r"(d[i])::"memory");
}

// Matrix descriptor (PTX ISA, "matrix descriptor"): bits 0-13 start address
// >> 4, 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte
// offset >> 4, 49-51 base offset (0), 62-63 swizzle (0 = none). No-swizzle
// K-major: 8x16-byte core matrices of 128 contiguous bytes, the two along K
// 128 B apart, consecutive 8-row groups 256 B apart (A: 2 KB, B: N*32 B).
__device__ __forceinline__ uint64_t make_desc(unsigned saddr) {
  return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)(128 >> 4) << 16) |
         ((uint64_t)(256 >> 4) << 32);
}

__device__ __forceinline__ unsigned hash32(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Shared memory: A of warpgroup w at w*2 KB, B at 8 KB (8 KB); 16 KB used.
constexpr int SMEM_USED = 16384;
constexpr int SMEM_ONE_SM = 16384;       // one-SM runs
constexpr int SMEM_CHIP = 120 * 1024;    // chip-wide: forces one block per SM

// fill 0: zeros; 1: random fp16 in +-[0.5, 1) (for the power-relevant run).
template <class Op, int WG, bool LAT>
__global__ void __launch_bounds__(384, 1)
    wg_kernel(int iters, int fill, Stamp* st, float* sink, int flag) {
  typedef typename Op::T T;
  extern __shared__ __align__(1024) unsigned char smem[];
  uint4* s4 = reinterpret_cast<uint4*>(smem);
  for (int i = threadIdx.x; i < SMEM_USED / 16; i += blockDim.x) {
    uint4 v = make_uint4(0, 0, 0, 0);
    if (fill) {
      unsigned h[4];
      for (int j = 0; j < 4; j++) {
        unsigned x = hash32(i * 4 + j + 1);
        h[j] = ((x & 0x83FFu) | 0x3800u) | ((((x >> 16) & 0x83FFu) | 0x3800u) << 16);
      }
      v = make_uint4(h[0], h[1], h[2], h[3]);
    }
    s4[i] = v;
  }
  // generic-proxy stores -> async proxy (wgmma reads shared memory there)
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned wg = threadIdx.x / 128;
  const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
  const uint64_t da = make_desc(base + wg * 2048), db = make_desc(base + 8192);
  T d[Op::R];
#pragma unroll
  for (int i = 0; i < Op::R; i++) d[i] = 0;
  pin(d);
  __syncthreads();
  long long c0 = clk();
  unsigned long long g0 = gtimer();
  if (LAT) {
    for (int it = 0; it < iters; it++) {
      wg_fence();
      Op::mma(d, da, db);
      wg_commit();
      wg_wait<0>();
    }
  } else {
    for (int it = 0; it < iters; it++) {
      wg_fence();
      Op::mma(d, da, db);
      Op::mma(d, da, db);
      Op::mma(d, da, db);
      Op::mma(d, da, db);
      wg_commit();
      wg_wait<1>();
    }
    wg_wait<0>();
  }
  pin(d);
  __syncthreads();
  long long c1 = clk();
  unsigned long long g1 = gtimer();
  if (threadIdx.x == 0) st[blockIdx.x] = {c0, c1, g0, g1, smid(), 0};
  if (flag) {
    T s = 0;
#pragma unroll
    for (int i = 0; i < Op::R; i++) s += d[i];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = (float)s;
  }
}

// One thread per block: `windows` consecutive windows of win_ns each, SM
// cycles and globaltimer ns per window -> out[block * windows + w].
__global__ void clock_probe(int windows, long long win_ns, Stamp* out) {
  for (int w = 0; w < windows; w++) {
    unsigned long long g0 = gtimer(), g1;
    long long c0 = clk();
    do g1 = gtimer(); while ((long long)(g1 - g0) < win_ns);
    long long c1 = clk();
    out[blockIdx.x * windows + w] = {c0, c1, g0, g1, smid(), 0};
  }
}

static Stamp* g_st;
static Stamp* g_probe;
static float* g_sink;
static int g_sms;
constexpr int PROBE_WINDOWS = 20;
constexpr long long PROBE_WIN_NS = 20000;

// Median (of 5) SM cycles of one block.
template <class Op, int WG, bool LAT>
static double cycles(int iters) {
  std::vector<double> v;
  for (int k = 0; k < 5; k++) {
    wg_kernel<Op, WG, LAT><<<1, WG * 128, SMEM_ONE_SM>>>(iters, 0, g_st, g_sink, 0);
    CKL();
    Stamp s;
    CK(cudaMemcpy(&s, g_st, sizeof s, cudaMemcpyDeviceToHost));
    v.push_back((double)(s.c1 - s.c0));
  }
  return median(v);
}

static std::string shape(const char* ty, int n, int k) {
  return std::string(ty) + "_m64n" + std::to_string(n) + "k" + std::to_string(k);
}

// per_sm_datasheet: MAC per SM cycle that the datasheet's dense rate implies
// at 1980 MHz (fp16 989 TFLOP/s, int8 1979 TOPS, 132 SMs).
template <class Op>
static void throughput(const char* ty, double per_sm_datasheet, Json& r,
                       std::vector<std::string>& rows, double& best) {
  const int IT = 1024;
  const double macs = 64.0 * Op::N * Op::K;
  for (int w = 1; w <= 3; w++) {
    double c = w == 1 ? cycles<Op, 1, false>(IT) : w == 2 ? cycles<Op, 2, false>(IT)
                                                          : cycles<Op, 3, false>(IT);
    double n = (double)w * IT * 4;
    double mpc = n * macs / c;
    best = std::max(best, mpc);
    std::string key = shape(ty, Op::N, Op::K) + "_" + std::to_string(w) + "wg";
    r.num(key + "_cycles_per_wgmma_per_sm", c / n);
    rows.push_back(Json().str("shape", shape(ty, Op::N, Op::K)).num("n", Op::N)
                       .num("warpgroups", w).num("cycles_per_wgmma_per_sm", c / n)
                       .num("cycles_per_wgmma_per_warpgroup", c / (IT * 4.0))
                       .num("macs_per_cycle_per_sm", mpc)
                       .num("fraction_of_datasheet", mpc / per_sm_datasheet).dump());
  }
}

template <class Op>
static void latency(const char* ty, Json& r) {
  const int IT = 256;
  r.num(shape(ty, Op::N, Op::K) + "_dependent_latency_cycles", cycles<Op, 1, true>(IT) / IT);
}

// Chip-wide: one block of 2 warpgroups per SM, m64n256k16 chains, ~2 s.
static void sustained(const char* pfx, int fill, Json& r) {
  typedef F16<256> Op;
  auto kern = wg_kernel<Op, 2, false>;
  const double macs = 64.0 * Op::N * Op::K;
  EvTimer ev;
  int it0 = 20000;
  ev.start();
  kern<<<g_sms, 256, SMEM_CHIP>>>(it0, fill, g_st, g_sink, 0);
  float ms0 = ev.stop_ms();
  CKL();
  int iters = (int)std::min(2e9, it0 * 2000.0 / std::max(ms0, 0.01f));
  ev.start();
  kern<<<g_sms, 256, SMEM_CHIP>>>(iters, fill, g_st, g_sink, 0);
  CK(cudaEventRecord(ev.b));
  clock_probe<<<g_sms, 1>>>(PROBE_WINDOWS, PROBE_WIN_NS, g_probe);  // queued behind the load
  CK(cudaEventSynchronize(ev.b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, ev.a, ev.b));
  CKL();
  std::vector<Stamp> pr(g_sms * PROBE_WINDOWS);
  CK(cudaMemcpy(pr.data(), g_probe, sizeof(Stamp) * pr.size(), cudaMemcpyDeviceToHost));
  std::vector<std::string> after;
  for (int w = 0; w < PROBE_WINDOWS; w++) {
    std::vector<double> v;
    for (int b = 0; b < g_sms; b++) v.push_back(stamp_mhz(pr[b * PROBE_WINDOWS + w]));
    after.push_back(jnum(median(v)));
  }
  std::vector<Stamp> s(g_sms);
  CK(cudaMemcpy(s.data(), g_st, sizeof(Stamp) * g_sms, cudaMemcpyDeviceToHost));
  std::vector<double> mhz, mpc;
  std::vector<unsigned> ids;
  unsigned long long gmin = ~0ull, gmax = 0;
  for (auto& x : s) {
    mhz.push_back(stamp_mhz(x));
    mpc.push_back(2.0 * iters * 4 * macs / (double)(x.c1 - x.c0));
    ids.push_back(x.sm);
    gmin = std::min(gmin, x.g0);
    gmax = std::max(gmax, x.g1);
  }
  std::sort(ids.begin(), ids.end());
  int distinct = (int)(std::unique(ids.begin(), ids.end()) - ids.begin());
  double flop = (double)g_sms * 2 * iters * 4 * 2 * macs;
  std::string p = std::string("sustained_") + pfx + "_";
  r.num(p + "chip_tflops", flop / (ms * 1e-3) / 1e12)
      .num(p + "chip_tflops_globaltimer", flop / ((double)(gmax - gmin) * 1e-9) / 1e12)
      .num(p + "sm_clock_mhz_median", median(mhz))
      .num(p + "sm_clock_mhz_min", pct(mhz, 0))
      .num(p + "sm_clock_mhz_max", pct(mhz, 100))
      .num(p + "macs_per_cycle_per_sm_median", median(mpc))
      .num(p + "seconds", ms * 1e-3)
      .num(p + "blocks_on_distinct_sms", distinct)
      .raw(p + "probe_after_sm_clock_mhz_per_20us", jarr(after));
}

int main() {
  CK(cudaSetDevice(0));
  g_sms = num_sms();
  CK(cudaMalloc(&g_st, sizeof(Stamp) * g_sms));
  CK(cudaMalloc(&g_sink, sizeof(float) * g_sms * 384));
  CK(cudaMalloc(&g_probe, sizeof(Stamp) * g_sms * PROBE_WINDOWS));
  CK(cudaFuncSetAttribute(wg_kernel<F16<256>, 2, false>,
                          cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_CHIP));
  const double F16_DS = 989e12 / 2 / 132 / 1.98e9;   // 1892 MAC / SM cycle
  const double S8_DS = 1979e12 / 2 / 132 / 1.98e9;   // 3786 MAC / SM cycle
  Json r, m;
  std::vector<std::string> rf, rs;
  double bf = 0, bs = 0;
  throughput<F16<64>>("f16", F16_DS, r, rf, bf);
  throughput<F16<128>>("f16", F16_DS, r, rf, bf);
  throughput<F16<256>>("f16", F16_DS, r, rf, bf);
  throughput<S8<128>>("s8", S8_DS, r, rs, bs);
  throughput<S8<256>>("s8", S8_DS, r, rs, bs);
  r.num("f16_peak_macs_per_cycle_per_sm", bf)
      .num("f16_peak_fraction_of_datasheet", bf / F16_DS)
      .num("f16_peak_fraction_of_2048_macs_per_cycle", bf / 2048)
      .num("s8_peak_macs_per_cycle_per_sm", bs)
      .num("s8_peak_fraction_of_datasheet", bs / S8_DS)
      .num("s8_peak_fraction_of_4096_macs_per_cycle", bs / 4096)
      .num("datasheet_f16_macs_per_cycle_per_sm", F16_DS)
      .num("datasheet_s8_macs_per_cycle_per_sm", S8_DS);
  r.raw("f16_throughput", jarr(rf)).raw("s8_throughput", jarr(rs));
  latency<F16<64>>("f16", r);
  latency<F16<128>>("f16", r);
  latency<F16<256>>("f16", r);
  latency<S8<256>>("s8", r);
  sustained("f16_m64n256k16_random_data", 1, r);
  sustained("f16_m64n256k16_zero_data", 0, r);
  m.str("throughput",
        "1 block (one SM) of 1-3 warpgroups (128 threads each), each 1024 x {wgmma.fence; 4 x "
        "wgmma on one accumulator; commit_group; wait_group 1}, then wait_group 0; A (64xK, "
        "its own 2 KB per warpgroup) and B (KxN, shared) from shared memory through "
        "no-swizzle K-major descriptors, zero data; SM cycles (clock64) between barriers / "
        "wgmma count of all warpgroups; MAC = 64*N*K per wgmma; median of 5")
      .str("datasheet",
           "fraction_of_datasheet = MAC per SM cycle / (dense datasheet rate / 2 / 132 SMs / "
           "1.98e9 Hz): fp16 989 TFLOP/s -> 1892, int8 1979 TOPS -> 3786. The datasheet rate "
           "corresponds to 2048 (fp16) / 4096 (int8) MAC per SM cycle at about 1.83 GHz, so "
           "a fraction slightly above 1 is possible; *_fraction_of_2048/4096 uses those")
      .str("latency",
           "1 warpgroup, 256 x {wgmma.fence; 1 wgmma; commit_group; wait_group 0} on one "
           "accumulator; clock64 cycles / 256, median of 5")
      .str("sustained",
           "grid = SM count blocks x 2 warpgroups, 120 KB dynamic shared memory (one block per "
           "SM, checked with %smid), m64n256k16 chains as in throughput, iterations scaled to "
           "about 2 s from a 20000-iteration run; TFLOP/s = 2*MAC / CUDA-event time "
           "(_globaltimer: first start to last end stamp in the kernel); SM clock per block = "
           "clock64 delta / %globaltimer delta over the whole run, median/min/max over SMs; "
           "random_data: shared memory holds random fp16 in +-[0.5,1) (the same tiles every "
           "wgmma), zero_data: zeros; random first, then zeros, back to back; "
           "probe_after_sm_clock_mhz_per_20us: a kernel queued right behind the load, one "
           "thread per SM spinning on %globaltimer, clock64 delta / globaltimer delta in 20 "
           "consecutive 20 us windows, median over SMs per window");
  emit("wgmma", r, m);
  return 0;
}
