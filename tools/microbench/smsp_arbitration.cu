// Do the four sub-partitions (SMSPs) of an SM share its load/store path fairly when it is the
// limit? One block per SM of W warps (8, 16, 32); every warp runs the same loop of independent
// loads that keeps the LSU / MIO queue full (shared: 4 x ld.volatile.shared.v4 per iteration;
// global: 4 x ld.global.cg.v4 from an L2-resident 4 MB buffer), and records clock64 at its start
// and end and its %warpid. Grouped by sub-partition (%warpid % 4): the median cycles a warp took
// and the median of the ratio (slowest sub-partition's mean / fastest's) over the SMs. With a
// fixed-priority arbiter the warps of sub-partitions 2 and 3 would finish long after those of 0
// and 1; with a fair one, together. sim/README.md ("Sampled simulation") says why it matters.
#include "common.cuh"

struct WarpStamp {
  long long c0, c1;
  unsigned warpid, sm;
};

__device__ __forceinline__ int4 ld_global_cg(const int4* p) {
  int4 v;
  asm volatile("ld.global.cg.v4.s32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ int4 ld_shared(const int4* p) {
  int4 v;
  asm volatile("ld.volatile.shared.v4.s32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(unsigned(__cvta_generic_to_shared(p))));
  return v;
}

template <bool kGlobal>
__global__ void lsu_loop(const int4* __restrict__ buf, unsigned buf_int4, int iters,
                         WarpStamp* stamps, int4* sink, int flag) {
  __shared__ int4 smem[2048];  // 32 KB
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) smem[i] = make_int4(i, i, i, i);
  __syncthreads();
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned wid;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
  int4 a0 = make_int4(0, 0, 0, 0), a1 = a0, a2 = a0, a3 = a0;
  const long long c0 = clk();
  for (int i = 0; i < iters; ++i) {
    int4 v0, v1, v2, v3;
    if (kGlobal) {
      // Consecutive lanes, 16 B each: one 512-byte access per load, spread over the buffer.
      const unsigned base =
          ((blockIdx.x * 64 + warp * 4 + unsigned(i) * 97) * 128 + lane) % buf_int4;
      v0 = ld_global_cg(buf + base);
      v1 = ld_global_cg(buf + (base + 32) % buf_int4);
      v2 = ld_global_cg(buf + (base + 64) % buf_int4);
      v3 = ld_global_cg(buf + (base + 96) % buf_int4);
    } else {
      // 32 consecutive int4 per warp access (512 B, conflict-free), four of them apart.
      const unsigned s = ((warp * 4 + unsigned(i) * 7) * 32 + lane) & 2047;
      v0 = ld_shared(&smem[s]);
      v1 = ld_shared(&smem[s ^ 32u]);
      v2 = ld_shared(&smem[s ^ 64u]);
      v3 = ld_shared(&smem[s ^ 128u]);
    }
    a0.x += v0.x;
    a1.y += v1.y;
    a2.z += v2.z;
    a3.w += v3.w;
  }
  const long long c1 = clk();
  if (lane == 0) {
    WarpStamp st;
    st.c0 = c0;
    st.c1 = c1;
    st.warpid = wid;
    st.sm = smid();
    stamps[blockIdx.x * (blockDim.x / 32) + warp] = st;
  }
  if (flag) sink[blockIdx.x * blockDim.x + threadIdx.x] = make_int4(a0.x, a1.y, a2.z, a3.w);
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  const int sms = p.multiProcessorCount;
  const unsigned buf_bytes = 4u << 20;  // L2-resident
  int4* buf;
  CK(cudaMalloc(&buf, buf_bytes));
  CK(cudaMemset(buf, 1, buf_bytes));
  int4* sink;
  CK(cudaMalloc(&sink, size_t(sms) * 1024 * sizeof(int4)));
  WarpStamp* stamps;
  CK(cudaMalloc(&stamps, size_t(sms) * 32 * sizeof(WarpStamp)));
  std::ostringstream res;
  res << "{";
  bool first = true;
  for (int global = 0; global < 2; ++global) {
    for (int warps : {8, 16, 32}) {
      const int iters = global ? 2000 : 20000;
      std::vector<double> sp_ratio, spread, sp_med[4], all;
      for (int rep = 0; rep < 5; ++rep) {
        if (global) {
          lsu_loop<true><<<sms, warps * 32>>>(buf, buf_bytes / 16, iters, stamps, sink, 0);
        } else {
          lsu_loop<false><<<sms, warps * 32>>>(buf, buf_bytes / 16, iters, stamps, sink, 0);
        }
        CKL();
        std::vector<WarpStamp> h(size_t(sms) * warps);
        CK(cudaMemcpy(h.data(), stamps, h.size() * sizeof(WarpStamp), cudaMemcpyDeviceToHost));
        for (int b = 0; b < sms; ++b) {
          double sum[4] = {0, 0, 0, 0};
          int n[4] = {0, 0, 0, 0};
          long long start = h[size_t(b) * warps].c0, lo = 1LL << 62, hi = 0;
          for (int w = 0; w < warps; ++w) start = std::min(start, h[size_t(b) * warps + w].c0);
          for (int w = 0; w < warps; ++w) {
            const WarpStamp& s = h[size_t(b) * warps + w];
            const double took = double(s.c1 - s.c0);
            const int q = int(s.warpid % 4);
            sum[q] += took;
            ++n[q];
            sp_med[q].push_back(took);
            all.push_back(took);
            lo = std::min(lo, s.c1 - start);
            hi = std::max(hi, s.c1 - start);
          }
          double mn = 1e30, mx = 0;
          for (int q = 0; q < 4; ++q) {
            if (!n[q]) continue;
            mn = std::min(mn, sum[q] / n[q]);
            mx = std::max(mx, sum[q] / n[q]);
          }
          sp_ratio.push_back(mx / mn);
          spread.push_back(double(hi) / double(lo));
        }
      }
      char key[64];
      snprintf(key, sizeof key, "%s_%dwarps", global ? "global_l2" : "shared", warps);
      res << (first ? "" : ",") << "\"" << key << "\":{";
      first = false;
      res << "\"iters\":" << iters << ",\"warp_cycles_median\":" << median(all);
      for (int q = 0; q < 4; ++q) {
        res << ",\"warp_cycles_median_smsp" << q << "\":" << median(sp_med[q]);
      }
      res << ",\"slowest_over_fastest_smsp_median\":" << median(sp_ratio)
          << ",\"slowest_over_fastest_smsp_max\":" << pct(sp_ratio, 100)
          << ",\"last_over_first_warp_end_median\":" << median(spread) << "}";
    }
  }
  res << "}";
  printf(
      "{\"topic\":\"smsp_arbitration\",\"results\":%s,\"method\":{\"smsp_arbitration\":\"one block "
      "per SM of 8/16/32 warps, each warp a loop of 4 independent 16-B-per-lane loads per "
      "iteration (shared: ld.volatile.shared.v4, 20000 iterations; global: ld.global.cg.v4 from a "
      "4 MB L2-resident buffer, 2000 iterations); clock64 at each warp's start and end, grouped by "
      "%%warpid %% 4; per SM the ratio of the slowest sub-partition's mean warp time to the "
      "fastest's, median and max over 5 launches x all SMs; last/first warp end on an SM\"}}\n",
      res.str().c_str());
  return 0;
}
