// Do two warps that share a sub-partition settle into an interleaving of their work that
// persists, so that SMs running identical blocks run at different rates? The simulator's
// greedy-then-oldest issue does (sim/README.md, "Out of sample": the MAC A100's W1A16 GEMV, 18
// of 108 SMs about 3% slower for the whole kernel). Four blocks of two warps per SM (dynamic
// shared memory allows no more), so each sub-partition holds two warps of different blocks;
// every warp runs the same loop: an integer burst (four chains of multiply-add, shift and xor:
// a dequantize's kind of work) whose results are the operands of a dependent chain of
// mma.sync.m16n8k16 on one accumulator, whose result seeds the next trip's integer chains. Each
// warp reads clock64 after a warm-up of trips and at the end: cycles per trip. Reported: the
// per-SM rate (mean of its warps) over its median across SMs (spread, fraction of SMs beyond
// 1% and 2%), the per-warp rates' spread, and one warp per sub-partition alone for reference
// (the rate with no partner).
#include "common.cuh"

struct PhaseStamp {
  long long warm, end;
  unsigned sm, warpid;
};

__global__ void phase_kernel(int trips, int warm, int alu_steps, int mmas, PhaseStamp* out,
                             unsigned* sink, int flag) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned x0 = lane * 2654435761u + blockIdx.x, x1 = x0 ^ 0x9e3779b9u, x2 = x0 + 7u, x3 = x0 * 3u;
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  long long c_warm = 0;
  for (int t = 0; t < trips; ++t) {
    if (t == warm) c_warm = clk();
    for (int i = 0; i < alu_steps; ++i) {
      x0 = (x0 >> 3) ^ (x0 * 5u + 1u);
      x1 = (x1 >> 5) ^ (x1 * 9u + 3u);
      x2 = (x2 >> 7) ^ (x2 * 17u + 5u);
      x3 = (x3 >> 2) ^ (x3 * 33u + 7u);
    }
    // Small finite halves: keep the exponent bits low.
    const unsigned a[4] = {x0 & 0x03ff03ffu, x1 & 0x03ff03ffu, x2 & 0x03ff03ffu, x3 & 0x03ff03ffu};
    const unsigned b[2] = {(x0 ^ x1) & 0x03ff03ffu, (x2 ^ x3) & 0x03ff03ffu};
    for (int i = 0; i < mmas; ++i) mma_f16(d, a, b);
    x0 ^= __float_as_uint(d[0]);
    x1 ^= __float_as_uint(d[1]);
    x2 ^= __float_as_uint(d[2]);
    x3 ^= __float_as_uint(d[3]);
  }
  const long long c_end = clk();
  if (lane == 0) {
    unsigned wid;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    out[blockIdx.x * (blockDim.x / 32) + warp] = {c_warm, c_end, smid(), wid};
  }
  if (flag) sink[blockIdx.x * blockDim.x + threadIdx.x] = x0 ^ x1 ^ x2 ^ x3;
}

int main() {
  CK(cudaSetDevice(0));
  const int sms = num_sms();
  const int smem_per_sm = allow_dynamic_smem(phase_kernel).per_sm;
  const int trips = 400, warm = 50;
  PhaseStamp* d_out = nullptr;
  unsigned* d_sink = nullptr;
  CK(cudaMalloc(&d_out, sizeof(PhaseStamp) * 8 * sms));
  CK(cudaMalloc(&d_sink, sizeof(unsigned) * 64 * 4 * sms));
  Json r, m;
  std::vector<std::string> cases;
  struct Case {
    int alu_steps, mmas;
  };
  for (const Case c : {Case{6, 8}, Case{12, 8}, Case{6, 16}}) {
    // Paired: 4 blocks x 2 warps per SM. Alone: 1 block of 4 warps per SM (one per sub-partition).
    double alone_rate = 0;
    {
      phase_kernel<<<sms, 128, smem_per_sm - 2048>>>(trips, warm, c.alu_steps, c.mmas, d_out,
                                                     d_sink, 0);
      CKL();
      std::vector<PhaseStamp> st(4 * sms);
      CK(cudaMemcpy(st.data(), d_out, sizeof(PhaseStamp) * st.size(), cudaMemcpyDeviceToHost));
      std::vector<double> rate;
      for (const PhaseStamp& s : st) rate.push_back(double(s.end - s.warm) / (trips - warm));
      alone_rate = median(rate);
    }
    std::vector<double> sm_spread, frac1, frac2, warp_p99, warp_p1, paired_rate, sm_max;
    std::vector<double> pooled_sm_rel;
    for (int rep = 0; rep < 5; ++rep) {
      phase_kernel<<<4 * sms, 64, smem_per_sm / 4 - 2048>>>(trips, warm, c.alu_steps, c.mmas, d_out,
                                                            d_sink, 0);
      CKL();
      std::vector<PhaseStamp> st(8 * sms);
      CK(cudaMemcpy(st.data(), d_out, sizeof(PhaseStamp) * st.size(), cudaMemcpyDeviceToHost));
      std::vector<double> sum(sms, 0), count(sms, 0), warp_rate;
      for (const PhaseStamp& s : st) {
        const double rt = double(s.end - s.warm) / (trips - warm);
        warp_rate.push_back(rt);
        sum[s.sm] += rt;
        count[s.sm] += 1;
      }
      std::vector<double> sm_rate;
      for (int i = 0; i < sms; ++i) {
        if (count[i] != 8) fprintf(stderr, "SM %d ran %g warps (expected 8)\n", i, count[i]);
        if (count[i] > 0) sm_rate.push_back(sum[i] / count[i]);
      }
      const double med = median(sm_rate), wmed = median(warp_rate);
      int over1 = 0, over2 = 0;
      for (double x : sm_rate) {
        over1 += x > 1.01 * med;
        over2 += x > 1.02 * med;
        pooled_sm_rel.push_back(x / med);
      }
      paired_rate.push_back(wmed);
      sm_max.push_back(pct(sm_rate, 100) / med);
      sm_spread.push_back((pct(sm_rate, 100) - pct(sm_rate, 0)) / med);
      frac1.push_back(double(over1) / double(sm_rate.size()));
      frac2.push_back(double(over2) / double(sm_rate.size()));
      warp_p99.push_back(pct(warp_rate, 99) / wmed);
      warp_p1.push_back(pct(warp_rate, 1) / wmed);
    }
    // Per-SM rate over the median, pooled over the launches, in 0.5% bins from -5% to +5%.
    std::vector<std::string> hist;
    for (int k = -10; k < 10; ++k) {
      int n = 0;
      for (double x : pooled_sm_rel) n += x >= 1 + 0.005 * k && x < 1 + 0.005 * (k + 1);
      hist.push_back(jnum(n));
    }
    Json cj;
    cj.num("alu_steps", c.alu_steps)
        .num("mmas", c.mmas)
        .num("alone_cycles_per_trip", alone_rate)
        .num("paired_cycles_per_trip_median", median(paired_rate))
        .num("sm_rate_max_over_median", median(sm_max))
        .num("sm_rate_spread_over_median", median(sm_spread))
        .num("sms_over_1pct_fraction", median(frac1))
        .num("sms_over_2pct_fraction", median(frac2))
        .num("warp_rate_p99_over_median", median(warp_p99))
        .num("warp_rate_p1_over_median", median(warp_p1))
        .raw("sm_rate_over_median_hist_0p5pct_from_m5pct", jarr(hist));
    cases.push_back(cj.dump());
  }
  r.raw("cases", jarr(cases)).num("trips", trips).num("warm_trips", warm).num("sms", sms);
  m.str("all",
        "4 blocks x 64 threads per SM (dynamic shared memory smem_per_sm / 4 - 2 KB), so each "
        "sub-partition holds two warps of different blocks; each warp: trips of {alu_steps x 4 "
        "chains of (x >> s) ^ (x * k + c); mmas dependent mma.sync.m16n8k16 f16 on one "
        "accumulator, operands from the chains; the result xored into the chains}. clock64 at "
        "trip 50 and at the end: cycles per trip per warp; an SM's rate is its 8 warps' mean. "
        "Medians over 5 launches of the per-launch statistics; the histogram pools them. Alone: "
        "one block of 4 warps per SM.");
  emit("smsp_phase", r, m);
  CK(cudaFree(d_out));
  CK(cudaFree(d_sink));
  return 0;
}
