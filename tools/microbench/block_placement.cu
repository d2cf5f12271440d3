// Where the block scheduler puts the blocks after the first wave when many SMs free their slots
// at once. Every block of the first wave spins until one absolute %globaltimer deadline, so all
// of them retire within about a microsecond; the blocks after them (the tail) each spin a fixed
// time. Dynamic shared memory lets exactly R blocks share an SM (R = 1, 2, 4). Per block: its SM
// (%smid) and its start and end (%globaltimer, ns). Reported per case: how many SMs took 0, 1,
// 2, ... tail blocks (breadth first: as many SMs as tail blocks, one each, while tail <= SMs;
// depth first: each SM that frees its slots first fills all of them), the tail blocks' start
// after the deadline, and the spacing between tail blocks that start on one SM. The simulator's
// dispatcher (sim/sm.h, BlockDispatcher) is checked against what this finds (sim/README.md,
// "Block dispatch against the H200"; test Dispatch.ATailThatFindsEverySmFreeingAtOnce...).
#include "common.cuh"

__device__ unsigned long long g_now;

__global__ void read_timer() {
  g_now = gtimer();
}

// Thread 0 stamps; every thread spins (the block holds its SM slot until all have left).
__global__ void spin_blocks(unsigned long long deadline, unsigned long long tail_ns,
                            Stamp* stamps) {
  extern __shared__ int smem[];
  __shared__ unsigned long long start;
  if (threadIdx.x == 0) {
    start = gtimer();
    smem[0] = int(start);  // touch the dynamic shared memory
  }
  __syncthreads();
  const unsigned long long until = start < deadline ? deadline : start + tail_ns;
  while (gtimer() < until) {
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    Stamp s;
    s.c0 = 0;
    s.c1 = 0;
    s.g0 = start;
    s.g1 = gtimer();
    s.sm = smid();
    s.pad = 0;
    stamps[blockIdx.x] = s;
  }
}

int main() {
  CK(cudaSetDevice(0));
  const int sms = num_sms();
  const SmemLimits smem = allow_dynamic_smem(spin_blocks);
  Stamp* d_stamps = nullptr;
  const int max_blocks = 8 * sms;
  CK(cudaMalloc(&d_stamps, sizeof(Stamp) * max_blocks));
  const unsigned long long first_ns = 300000;  // first wave: until 300 us after the launch
  const unsigned long long tail_ns = 100000;
  Json r, m;
  std::vector<std::string> cases;
  struct Case {
    int per_sm, tail;
  };
  const Case list[] = {{2, sms * 6 / 10}, {2, sms}, {4, sms}, {4, sms / 2}, {1, sms / 2}};
  for (const Case& c : list) {
    // Shared memory so that exactly c.per_sm blocks fit (the static 8 bytes and the per-block
    // reservation of 1 KB aside).
    const int dyn = std::min(smem.per_sm / c.per_sm - 2048, smem.optin - 1024);
    const int grid = c.per_sm * sms + c.tail;
    std::vector<double> per_sm_hist(16, 0), tail_start_us, same_sm_gap_us, first_spread_us;
    const int reps = 5;
    std::vector<double> breadth;  // SMs with a tail block / min(tail, SMs), per repetition
    for (int rep = 0; rep < reps; ++rep) {
      read_timer<<<1, 1>>>();
      CKL();
      unsigned long long now = 0;
      CK(cudaMemcpyFromSymbol(&now, g_now, sizeof now));
      const unsigned long long deadline = now + first_ns;
      spin_blocks<<<grid, 128, dyn>>>(deadline, tail_ns, d_stamps);
      CKL();
      std::vector<Stamp> st(grid);
      CK(cudaMemcpy(st.data(), d_stamps, sizeof(Stamp) * grid, cudaMemcpyDeviceToHost));
      std::vector<int> tail_on(sms, 0), first_on(sms, 0);
      std::vector<std::vector<unsigned long long>> starts(sms);
      unsigned long long first_lo = ~0ull, first_hi = 0;
      for (const Stamp& s : st) {
        if (s.g0 < deadline) {
          ++first_on[s.sm];
          first_lo = std::min(first_lo, s.g0);
          first_hi = std::max(first_hi, s.g0);
        } else {
          ++tail_on[s.sm];
          starts[s.sm].push_back(s.g0);
          tail_start_us.push_back(double(s.g0 - deadline) / 1e3);
        }
      }
      first_spread_us.push_back(double(first_hi - first_lo) / 1e3);
      int with_tail = 0;
      for (int i = 0; i < sms; ++i) {
        per_sm_hist[std::min(tail_on[i], 15)] += 1.0 / reps;
        with_tail += tail_on[i] > 0;
        std::sort(starts[i].begin(), starts[i].end());
        for (size_t j = 1; j < starts[i].size(); ++j) {
          same_sm_gap_us.push_back(double(starts[i][j] - starts[i][j - 1]) / 1e3);
        }
        if (first_on[i] != c.per_sm) {
          fprintf(stderr, "SM %d held %d first-wave blocks (expected %d)\n", i, first_on[i],
                  c.per_sm);
        }
      }
      breadth.push_back(double(with_tail) / std::min(c.tail, sms));
    }
    std::vector<std::string> hist;
    int last = 15;
    while (last > 0 && per_sm_hist[last] == 0) --last;
    for (int k = 0; k <= last; ++k) hist.push_back(jnum(per_sm_hist[k]));
    Json cj;
    cj.num("blocks_per_sm", c.per_sm)
        .num("tail_blocks", c.tail)
        .num("grid", grid)
        .num("dynamic_smem_bytes", dyn)
        .raw("sms_with_k_tail_blocks_mean", jarr(hist))
        .num("sms_with_a_tail_block_over_min_tail_sms_median", median(breadth))
        .num("sms_with_a_tail_block_over_min_tail_sms_min", pct(breadth, 0))
        .num("tail_start_after_deadline_us_median", median(tail_start_us))
        .num("tail_start_after_deadline_us_p95", pct(tail_start_us, 95))
        .num("tail_start_after_deadline_us_max", pct(tail_start_us, 100))
        .num("same_sm_tail_start_gap_us_median", median(same_sm_gap_us))
        .num("first_wave_start_spread_us_median", median(first_spread_us));
    cases.push_back(cj.dump());
  }
  r.raw("cases", jarr(cases));
  r.num("sms", sms).num("smem_per_sm_bytes", smem.per_sm);
  m.str("all",
        "one launch of R x SMs + T blocks of 128 threads, dynamic shared memory smem_per_sm / R - "
        "2 KB so exactly R fit per SM; blocks starting before an absolute %globaltimer deadline "
        "(300 us after a timer read just before the launch) spin until it, so the first wave "
        "retires at once; later blocks spin 100 us. Per block thread 0 records %smid and "
        "%globaltimer at start and end. 5 repetitions per case; histograms averaged, times "
        "pooled (medians, percentiles).");
  m.str("breadth_first",
        "sms_with_a_tail_block_over_min_tail_sms = 1: every tail block on its own SM (while the "
        "tail is no larger than the SMs); 1 / R: each SM that took one took R");
  emit("block_placement", r, m);
  CK(cudaFree(d_stamps));
  return 0;
}
