// Load-to-use latency by pointer chasing: one thread, each load's address is
// the value the previous load returned, so loads cannot overlap.
//  - L1 hit:  ld.global.ca over a small region, chased once to warm it, then timed
//             in the same kernel (L1 does not survive kernel boundaries).
//  - L2 hit:  ld.global.cg (L1 bypass) over 4 MB, warmed by a full pass.
//  - DRAM:    ld.global.cg over 8192 distinct random 128-byte lines in a large
//             region, after a 512 MB memset that evicts L2; no warm-up.
//  - shared:  ld.shared.u32 chase over a random cycle of 4 KB.
// Per-load histograms (clock64 around each load) show near/far L2 partitions.
#include "common.cuh"

template <int CG>
__device__ __forceinline__ unsigned long long ldp(unsigned long long p) {
  if (CG)
    asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p)::"memory");
  else
    asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p)::"memory");
  return p;
}

template <int CG>
__global__ void chase(unsigned long long p, int warm, int steps,
                      unsigned long long* sink, long long* cyc) {
  for (int i = 0; i < warm; i++) p = ldp<CG>(p);
  long long c0 = clk();
#pragma unroll 8
  for (int i = 0; i < steps; i++) p = ldp<CG>(p);
  long long c1 = clk();
  sink[0] = p;
  cyc[0] = c1 - c0;
}

// clock64 around each single load; the st.shared of the loaded value makes the
// second clock read wait for the load (in-order issue).
template <int CG>
__global__ void chase_each(unsigned long long p, int warm, int n,
                           unsigned* lat_out, unsigned long long* sink) {
  __shared__ unsigned lat[4096];
  __shared__ unsigned dummy;
  unsigned da = (unsigned)__cvta_generic_to_shared(&dummy);
  for (int i = 0; i < warm; i++) p = ldp<CG>(p);
  for (int i = 0; i < n; i++) {
    long long t0 = clk();
    p = ldp<CG>(p);
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(da), "r"((unsigned)p) : "memory");
    long long t1 = clk();
    lat[i] = (unsigned)(t1 - t0);
  }
  for (int i = 0; i < n; i++) lat_out[i] = lat[i];
  sink[0] = p;
}

__global__ void smem_chase(const unsigned* next, int n, int warm, int steps,
                           long long* cyc, unsigned* sink) {
  __shared__ unsigned s[1024];
  unsigned base = (unsigned)__cvta_generic_to_shared(s);
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = base + next[i] * 4;
  __syncthreads();
  if (threadIdx.x) return;
  unsigned p = base;
  for (int i = 0; i < warm; i++) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)::"memory");
  long long c0 = clk();
#pragma unroll 8
  for (int i = 0; i < steps; i++) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)::"memory");
  long long c1 = clk();
  cyc[0] = c1 - c0;
  sink[0] = p;
}

__global__ void scatter(char* buf, const unsigned long long* slots, long long m) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < m)
    *(unsigned long long*)(buf + slots[i]) =
        (unsigned long long)(buf + slots[(i + 1) % m]);
}

static std::mt19937_64 rng(12345);

// Build a random cycle over m distinct line-aligned slots of [buf, buf+region).
static unsigned long long build_chain(char* buf, size_t region, size_t line, size_t m) {
  size_t nslots = region / line;
  if (m > nslots) m = nslots;
  std::vector<unsigned long long> slots;
  if (m * 4 >= nslots) {
    std::vector<unsigned long long> all(nslots);
    for (size_t i = 0; i < nslots; i++) all[i] = i * line;
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(m);
    slots.swap(all);
  } else {
    std::vector<unsigned long long> pick;
    pick.reserve(m * 2);
    std::uniform_int_distribution<unsigned long long> u(0, nslots - 1);
    while (pick.size() < m * 1.3) pick.push_back(u(rng));
    std::sort(pick.begin(), pick.end());
    pick.erase(std::unique(pick.begin(), pick.end()), pick.end());
    std::shuffle(pick.begin(), pick.end(), rng);
    pick.resize(std::min(pick.size(), m));
    for (auto s : pick) slots.push_back(s * line);
  }
  unsigned long long* d;
  CK(cudaMalloc(&d, slots.size() * 8));
  CK(cudaMemcpy(d, slots.data(), slots.size() * 8, cudaMemcpyHostToDevice));
  long long mm = slots.size();
  scatter<<<(unsigned)((mm + 255) / 256), 256>>>(buf, d, mm);
  CKL();
  CK(cudaFree(d));
  return (unsigned long long)(buf + slots[0]);
}

static unsigned long long* g_sink;
static long long* g_cyc;
static unsigned* g_lat;
static char* g_flush;
static const size_t FLUSH = 512ull << 20;

static void flush_l2() { CK(cudaMemset(g_flush, 1, FLUSH)); CKL(); }

static double run_chase(bool cg, unsigned long long p, int warm, int steps) {
  if (cg) chase<1><<<1, 1>>>(p, warm, steps, g_sink, g_cyc);
  else chase<0><<<1, 1>>>(p, warm, steps, g_sink, g_cyc);
  CKL();
  long long c;
  CK(cudaMemcpy(&c, g_cyc, 8, cudaMemcpyDeviceToHost));
  return (double)c / steps;
}
static std::vector<double> run_each(bool cg, unsigned long long p, int warm, int n) {
  if (cg) chase_each<1><<<1, 1>>>(p, warm, n, g_lat, g_sink);
  else chase_each<0><<<1, 1>>>(p, warm, n, g_lat, g_sink);
  CKL();
  std::vector<unsigned> h(n);
  CK(cudaMemcpy(h.data(), g_lat, n * 4, cudaMemcpyDeviceToHost));
  return std::vector<double>(h.begin(), h.end());
}

// 1-D 2-means; returns {c_low, c_high, frac_low}.
static void two_means(const std::vector<double>& v, double& a, double& b, double& fa) {
  a = pct(v, 20);
  b = pct(v, 80);
  for (int it = 0; it < 50; it++) {
    double sa = 0, sb = 0;
    int na = 0, nb = 0;
    for (double x : v) {
      if (std::abs(x - a) <= std::abs(x - b)) { sa += x; na++; } else { sb += x; nb++; }
    }
    if (na) a = sa / na;
    if (nb) b = sb / nb;
    fa = (double)na / v.size();
  }
}
static std::string histo(const std::vector<double>& v, double bin) {
  double lo = pct(v, 0.5), hi = pct(v, 99.5);
  Json h;
  std::vector<int> cnt((size_t)((hi - lo) / bin) + 1, 0);
  for (double x : v)
    if (x >= lo && x <= hi) cnt[(size_t)((x - lo) / bin)]++;
  for (size_t i = 0; i < cnt.size(); i++)
    if (cnt[i]) h.num(jnum(lo + i * bin), cnt[i]);
  return h.dump();
}

int main() {
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&g_sink, 64));
  CK(cudaMalloc(&g_cyc, 64));
  CK(cudaMalloc(&g_lat, 4096 * 4));
  CK(cudaMalloc(&g_flush, FLUSH));
  CK(cudaFuncSetAttribute(chase<0>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  CK(cudaFuncSetAttribute(chase_each<0>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  const size_t BIG = 4ull << 30;
  char* buf;
  CK(cudaMalloc(&buf, BIG));
  Json r, m;
  const size_t LINE = 128;
  const int STEPS = 16384;

  // ---- L1 (ld.ca) size sweep ----
  std::vector<size_t> ca_sizes = {8 << 10, 16 << 10, 32 << 10, 64 << 10, 96 << 10, 128 << 10,
                                  160 << 10, 192 << 10, 208 << 10, 224 << 10, 240 << 10,
                                  256 << 10, 320 << 10, 512 << 10, 1 << 20, 4 << 20};
  std::vector<std::string> sweep;
  double l1 = 0, l2_via_ca = 0;
  for (size_t sz : ca_sizes) {
    unsigned long long p = build_chain(buf, sz, LINE, sz / LINE);
    std::vector<double> v;
    for (int k = 0; k < 3; k++) v.push_back(run_chase(false, p, (int)(sz / LINE) * 2, STEPS));
    double c = median(v);
    if (sz == (16 << 10)) l1 = c;
    if (sz == (4 << 20)) l2_via_ca = c;
    sweep.push_back(Json().num("bytes", (double)sz).num("cycles", c).dump());
  }
  r.raw("ld_ca_size_sweep", jarr(sweep));
  r.num("l1_hit_latency_cycles", l1);
  r.num("l2_hit_latency_ld_ca_l1_miss_cycles", l2_via_ca);

  // ---- L2 (ld.cg) size sweep ----
  sweep.clear();
  std::vector<size_t> cg_sizes = {1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 24 << 20,
                                  32 << 20, 40 << 20, 48 << 20, 56 << 20, 64 << 20,
                                  96 << 20, 128 << 20};
  double l2 = 0;
  for (size_t sz : cg_sizes) {
    unsigned long long p = build_chain(buf, sz, LINE, sz / LINE);
    double c = run_chase(true, p, (int)(sz / LINE), STEPS);
    if (sz == (4 << 20)) {
      std::vector<double> v = {c};
      for (int k = 0; k < 4; k++) v.push_back(run_chase(true, p, (int)(sz / LINE), STEPS));
      c = median(v);
      l2 = c;
    }
    sweep.push_back(Json().num("bytes", (double)sz).num("cycles", c).dump());
  }
  r.raw("ld_cg_size_sweep", jarr(sweep));
  r.num("l2_hit_latency_cycles", l2);

  // ---- per-load histograms: overhead from L1, then L2 near/far ----
  {
    unsigned long long p = build_chain(buf, 16 << 10, LINE, (16 << 10) / LINE);
    auto v = run_each(false, p, 512, 4096);
    double ovh = median(v) - l1;
    r.num("per_load_timer_overhead_cycles", ovh);
    p = build_chain(buf, 4 << 20, LINE, (4 << 20) / LINE);
    auto w = run_each(true, p, (4 << 20) / LINE, 4096);
    for (auto& x : w) x -= ovh;
    double a, b, fa;
    two_means(w, a, b, fa);
    r.num("l2_per_load_median_cycles", median(w))
        .num("l2_per_load_p5_cycles", pct(w, 5))
        .num("l2_per_load_p95_cycles", pct(w, 95))
        .num("l2_near_cluster_latency_cycles", a)
        .num("l2_far_cluster_latency_cycles", b)
        .num("l2_near_cluster_fraction", fa)
        .raw("l2_per_load_histogram_cycles_to_count", histo(w, 8));
    // DRAM per load
    p = build_chain(buf, 256 << 20, LINE, 4096);
    flush_l2();
    auto d = run_each(true, p, 0, 4096);
    for (auto& x : d) x -= ovh;
    r.num("dram_per_load_median_cycles", median(d))
        .num("dram_per_load_p5_cycles", pct(d, 5))
        .num("dram_per_load_p95_cycles", pct(d, 95))
        .raw("dram_per_load_histogram_cycles_to_count", histo(d, 32));
  }

  // ---- DRAM: distinct random lines, L2 flushed, no warm-up ----
  std::vector<size_t> dram_regions = {64ull << 20, 256ull << 20, 1ull << 30, 4ull << 30};
  sweep.clear();
  double dram = 0;
  for (size_t reg : dram_regions) {
    unsigned long long p = build_chain(buf, reg, LINE, 8192);
    std::vector<double> v;
    for (int k = 0; k < 3; k++) {
      flush_l2();
      v.push_back(run_chase(true, p, 0, 8192));
    }
    double c = median(v);
    if (reg == (256ull << 20)) dram = c;
    sweep.push_back(Json().num("region_bytes", (double)reg).num("cycles", c).dump());
  }
  r.raw("dram_latency_by_region", jarr(sweep));
  r.num("dram_latency_cycles", dram);

  // ---- shared memory ----
  {
    int n = 1024;
    std::vector<unsigned> idx(n), next(n);
    for (int i = 0; i < n; i++) idx[i] = i;
    std::shuffle(idx.begin() + 1, idx.end(), rng);
    for (int i = 0; i < n; i++) next[idx[i]] = idx[(i + 1) % n];
    unsigned* d;
    CK(cudaMalloc(&d, n * 4));
    CK(cudaMemcpy(d, next.data(), n * 4, cudaMemcpyHostToDevice));
    std::vector<double> v;
    for (int k = 0; k < 5; k++) {
      smem_chase<<<1, 256>>>(d, n, 1024, STEPS, g_cyc, (unsigned*)g_sink);
      CKL();
      long long c;
      CK(cudaMemcpy(&c, g_cyc, 8, cudaMemcpyDeviceToHost));
      v.push_back((double)c / STEPS);
    }
    r.num("shared_load_latency_cycles", median(v));
  }

  m.str("all", "one thread, dependent 64-bit loads (address = value loaded), "
               "nodes on random distinct 128-byte lines; cycles = clock64 delta / "
               "loads. Inline PTX keeps every load.")
      .str("l1_hit_latency_cycles", "ld.global.ca, 16 KB random cycle, 2 warm passes in the "
                                    "same kernel, 16384 timed loads, median of 3; "
                                    "shared-memory carveout preference 0")
      .str("l2_hit_latency_cycles", "ld.global.cg (L1 bypass), 4 MB random cycle warmed by one "
                                    "full pass, 16384 timed loads, median of 5")
      .str("l2_near_far", "clock64 read before and after each single ld.global.cg "
                          "(an st.shared of the value forces the wait), 4096 loads over "
                          "a warm 4 MB set, timer overhead (per-load minus chase L1 "
                          "latency) subtracted, split by 1-D 2-means; a bimodal "
                          "histogram indicates near/far L2 partitions")
      .str("dram_latency_cycles", "ld.global.cg over 8192 distinct random lines of a 256 MB "
                                  "region, L2 evicted by a 512 MB memset before each run, "
                                  "no warm-up, median of 3; other regions show TLB effects")
      .str("shared_load_latency_cycles", "ld.shared.u32 chase, value = next shared address, "
                                         "random cycle over 1024 words, median of 5")
      .str("sweeps", "random full cycle over the region, one warm pass, 16384 timed loads");
  emit("latency", r, m);
  return 0;
}
