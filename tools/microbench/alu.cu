// Arithmetic pipes. Latency: 1 thread, a chain where each op needs the last
// result (16 unrolled x iters). Throughput per SM: 1 block x 1024 threads
// (one SM), 8 independent chains per thread; ops = thread-level instructions.
// Chip-wide FFMA: 2 blocks x 1024 threads per SM, CUDA-event time -> TFLOP/s,
// and the SM clock under that load (clock64 vs globaltimer of block 0).
#include "common.cuh"

struct FFMA {
  typedef float T;
  static constexpr const char* name = "ffma_fp32";
  static constexpr int instr = 1;
  __device__ static T op(T x, T b, T c) { return fmaf(x, b, c); }
};
struct DFMA {
  typedef double T;
  static constexpr const char* name = "dfma_fp64";
  static constexpr int instr = 1;
  __device__ static T op(T x, T b, T c) { return fma(x, b, c); }
};
struct EX2 {  // x = 2^-x (neg folds into MUFU operand), converges
  typedef float T;
  static constexpr const char* name = "mufu_ex2";
  static constexpr int instr = 1;
  __device__ static T op(T x, T, T) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(-x));
    return y;
  }
};
struct RSQ {
  typedef float T;
  static constexpr const char* name = "mufu_rsqrt";
  static constexpr int instr = 1;
  __device__ static T op(T x, T, T) {
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
  }
};
struct IMAD {
  typedef unsigned T;
  static constexpr const char* name = "imad_u32";
  static constexpr int instr = 1;
  __device__ static T op(T x, T b, T c) { return x * b + c; }
};
struct ADDXOR {  // (x + b) ^ c: one IADD3 + one LOP3 per step
  typedef unsigned T;
  static constexpr const char* name = "iadd_lop_u32";
  static constexpr int instr = 2;
  __device__ static T op(T x, T b, T c) { return (x + b) ^ c; }
};

template <class Op, int ILP>
__global__ void kern(int iters, typename Op::T b, typename Op::T c, Stamp* st,
                     typename Op::T* sink, int flag) {
  typedef typename Op::T T;
  T x[ILP];
#pragma unroll
  for (int j = 0; j < ILP; j++) x[j] = (T)(threadIdx.x % 7 + j + 1) * (T)0.5f;
  __syncthreads();
  long long c0 = clk();
  unsigned long long g0 = gtimer();
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int u = 0; u < 16; u++)
#pragma unroll
      for (int j = 0; j < ILP; j++) x[j] = Op::op(x[j], b, c);
  }
  __syncthreads();
  if (threadIdx.x == 0) st[blockIdx.x] = {c0, clk(), g0, gtimer(), smid(), 0};
  if (flag) {
    T s = 0;
#pragma unroll
    for (int j = 0; j < ILP; j++) s += x[j];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
  }
}

static Stamp* g_st;
static void* g_sink;

template <class Op>
static void topic(Json& r, typename Op::T b, typename Op::T c) {
  std::vector<double> lat, tp;
  const int IT = 256;
  for (int k = 0; k < 5; k++) {
    kern<Op, 1><<<1, 1>>>(IT, b, c, g_st, (typename Op::T*)g_sink, 0);
    CKL();
    Stamp s;
    CK(cudaMemcpy(&s, g_st, sizeof s, cudaMemcpyDeviceToHost));
    lat.push_back((double)(s.c1 - s.c0) / (IT * 16.0 * Op::instr));
    kern<Op, 8><<<1, 1024>>>(IT / 4, b, c, g_st, (typename Op::T*)g_sink, 0);
    CKL();
    CK(cudaMemcpy(&s, g_st, sizeof s, cudaMemcpyDeviceToHost));
    tp.push_back(1024.0 * (IT / 4) * 16 * 8 * Op::instr / (double)(s.c1 - s.c0));
  }
  r.num(std::string(Op::name) + "_dependent_latency_cycles", median(lat));
  r.num(std::string(Op::name) + "_throughput_ops_per_cycle_per_sm", median(tp));
}

int main() {
  CK(cudaSetDevice(0));
  int sms = num_sms();
  CK(cudaMalloc(&g_st, sizeof(Stamp) * sms * 4));
  CK(cudaMalloc(&g_sink, 8ull * sms * 2048));
  Json r, m;
  topic<FFMA>(r, 0.999f, 0.001f);
  topic<DFMA>(r, 0.999, 0.001);
  topic<EX2>(r, 0, 0);
  topic<RSQ>(r, 0, 0);
  topic<IMAD>(r, 3u, 7u);
  topic<ADDXOR>(r, 0x9E3779B9u, 0x7F4A7C15u);
  {
    EvTimer ev;
    const int IT = 4096;
    int grid = sms * 2;
    kern<FFMA, 8><<<grid, 1024>>>(IT / 8, 0.999f, 0.001f, g_st, (float*)g_sink, 0);
    CKL();
    std::vector<double> tf, mhz;
    for (int k = 0; k < 5; k++) {
      ev.start();
      kern<FFMA, 8><<<grid, 1024>>>(IT, 0.999f, 0.001f, g_st, (float*)g_sink, 0);
      float ms = ev.stop_ms();
      CKL();
      Stamp s;
      CK(cudaMemcpy(&s, g_st, sizeof s, cudaMemcpyDeviceToHost));
      tf.push_back((double)grid * 1024 * IT * 16 * 8 * 2 / (ms * 1e-3) / 1e12);
      mhz.push_back(stamp_mhz(s));
    }
    r.num("ffma_fp32_chip_tflops", median(tf)).num("sm_clock_under_ffma_load_mhz", median(mhz));
  }
  m.str("latency", "1 thread, 4096 dependent ops (x = op(x, b, c), b and c kernel arguments), "
                   "clock64 cycles / ops, median of 5")
      .str("throughput", "1 block x 1024 threads (one SM), 8 independent chains per thread, "
                         "1024 ops per thread; thread-level ops / SM cycle, median of 5; "
                         "iadd_lop counts IADD3 and LOP3 separately (2 per step); "
                         "mufu_ex2 computes 2^-x (negation folded into MUFU operand)")
      .str("ffma_fp32_chip_tflops", "2 blocks x 1024 threads per SM, 8 chains x 65536 FFMA per "
                                    "thread, 2 FLOP per FFMA / CUDA-event time, median of 5");
  emit("alu", r, m);
  return 0;
}
