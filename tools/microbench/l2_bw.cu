// L2 bandwidth. Whole GPU: 4 blocks x 512 threads per SM read a buffer that
// fits in L2 with ld.global.cg (16 B per load, UNR independent loads in flight
// per thread, index = j mod buffer so passes do not break the pipelining);
// bytes / CUDA-event time, and bytes per SM-clock cycle using the clock
// measured in the same kernel (clock64 vs globaltimer of block 0).
// One SM: 1 block x 1024 threads over a 4 MB L2-resident buffer; bytes /
// clock64 cycles. Also L1 hit bandwidth (ld.ca, 64 KB resident set, 1 block).
#include "memkern.cuh"

template <int UNR, int MODE>
static double one_block(const int4* buf, size_t n, size_t total, int threads, Stamp* st, int4* sink) {
  std::vector<double> bpc;
  for (int k = 0; k < 5; k++) {
    rdm<UNR, MODE><<<1, threads>>>(buf, n - 1, total, st, sink, 0);
    CKL();
    auto s = get_stamps(st, 1);
    bpc.push_back((double)total * 16 / (double)(s[0].c1 - s[0].c0));
  }
  return median(bpc);
}

int main() {
  CK(cudaSetDevice(0));
  int sms = num_sms();
  const size_t MAXB = 64ull << 20;
  int4 *buf, *sink;
  Stamp* st;
  CK(cudaMalloc(&buf, MAXB));
  CK(cudaMalloc(&sink, 16ull * sms * 2048));
  CK(cudaMalloc(&st, sizeof(Stamp) * sms * 8));
  fill<<<sms * 4, 512>>>(buf, MAXB / 16);
  CKL();
  Json r, m;
  EvTimer ev;
  std::vector<std::string> rows;
  const size_t TOTAL = (4ull << 30) / 16;  // 4 GB read per run
  for (int unr : {4, 8}) {
    for (size_t mb : {2, 4, 8, 16, 32, 48}) {
      size_t n = (mb << 20) / 16;
      int grid = sms * 4;
      auto launch = [&] {
        if (unr == 4) rdm<4, 0><<<grid, 512>>>(buf, n - 1, TOTAL, st, sink, 0);
        else rdm<8, 0><<<grid, 512>>>(buf, n - 1, TOTAL, st, sink, 0);
      };
      launch();
      CKL();
      std::vector<double> gbs, bpc, mhz;
      for (int k = 0; k < 5; k++) {
        ev.start();
        launch();
        float ms = ev.stop_ms();
        CKL();
        auto s = get_stamps(st, 1);
        double f = stamp_mhz(s[0]);
        double g = (double)TOTAL * 16 / (ms * 1e-3) / 1e9;
        gbs.push_back(g);
        mhz.push_back(f);
        bpc.push_back(g * 1e9 / (f * 1e6));
      }
      Json row;
      row.num("working_set_mb", (double)mb).num("loads_in_flight_per_thread", unr)
          .num("gb_per_s", median(gbs)).num("bytes_per_cycle", median(bpc))
          .num("sm_clock_mhz", median(mhz));
      rows.push_back(row.dump());
      if (mb == 16 && unr == 8) {
        r.num("l2_bw_gpu_16mb_gb_per_s", median(gbs))
            .num("l2_bw_gpu_16mb_bytes_per_cycle", median(bpc))
            .num("l2_bw_gpu_16mb_bytes_per_cycle_per_sm", median(bpc) / sms)
            .num("l2_bw_gpu_sm_clock_during_mhz", median(mhz));
      }
    }
  }
  r.raw("l2_bw_gpu_by_working_set", jarr(rows));

  // one SM
  {
    size_t n = (4ull << 20) / 16;
    rdm<4, 0><<<sms * 4, 512>>>(buf, n - 1, n * 2, st, sink, 0);
    CKL();
    rows.clear();
    double best = 0;
    for (int t : {256, 512, 1024}) {
      for (int unr : {2, 4, 8, 16}) {
        double b = unr == 2 ? one_block<2, 0>(buf, n, n * 4, t, st, sink)
                 : unr == 4 ? one_block<4, 0>(buf, n, n * 4, t, st, sink)
                 : unr == 8 ? one_block<8, 0>(buf, n, n * 4, t, st, sink)
                            : one_block<16, 0>(buf, n, n * 4, t, st, sink);
        best = std::max(best, b);
        rows.push_back(Json().num("threads", t).num("loads_in_flight_per_thread", unr)
                           .num("bytes_per_cycle", b).dump());
      }
    }
    r.raw("l2_bw_one_sm_by_config", jarr(rows));
    r.num("l2_bw_one_sm_bytes_per_cycle", best);
    // L1 hit bandwidth on one SM: 64 KB set, read 256 times
    size_t n1 = (64ull << 10) / 16;
    double l1 = std::max(one_block<4, 1>(buf, n1, n1 * 256, 1024, st, sink),
                         one_block<8, 1>(buf, n1, n1 * 256, 1024, st, sink));
    r.num("l1_hit_bw_one_sm_bytes_per_cycle", l1);
  }
  m.str("l2_bw_gpu", "grid = 4 x SMs blocks of 512 threads, ld.global.cg of int4 at index "
                     "j mod buffer (4 GB read in total, buffer of the given size), 4 or 8 "
                     "independent loads per thread; GB/s = bytes / CUDA-event time after a "
                     "warm-up run; bytes/cycle uses the SM clock measured in the same kernel "
                     "(block 0 clock64 vs globaltimer); median of 5")
      .str("l2_bw_one_sm", "1 block (one SM) of 256/512/1024 threads, 2..16 int4 ld.global.cg "
                           "in flight per thread, 4 MB L2-resident buffer read 4 times; bytes / "
                           "clock64 cycles of the block; median of 5; headline = best config")
      .str("l1_hit_bw_one_sm", "1 block x 1024 threads, ld.global.ca over a 64 KB set read 256 "
                               "times (first pass misses), best of 4 and 8 loads in flight");
  emit("l2_bandwidth", r, m);
  return 0;
}
