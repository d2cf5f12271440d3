// Launch overhead and block dispatch.
//  - graph: 1000 empty-kernel nodes (1 block x 32 threads) captured from a
//    stream into a CUDA graph; per-kernel time = graph replay time / 1000.
//  - stream: 1000 back-to-back launches of the empty kernel, events around.
//  - sync: launch + cudaStreamSynchronize round trip, host clock.
//  - dispatch: one launch of N empty blocks (N = 264000) for several block
//    sizes; blocks per microsecond = N / event time.
#include <chrono>
#include "common.cuh"

__global__ void empty_k() {}

int main() {
  CK(cudaSetDevice(0));
  int sms = num_sms();
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  EvTimer ev;
  Json r, m;
  const int NK = 1000;
  empty_k<<<1, 32, 0, s>>>();
  CK(cudaStreamSynchronize(s));
  {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < NK; i++) empty_k<<<1, 32, 0, s>>>();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    std::vector<double> v;
    for (int k = 0; k < 11; k++) {
      ev.start(s);
      CK(cudaGraphLaunch(ge, s));
      v.push_back(ev.stop_ms(s) * 1e3 / NK);
    }
    r.num("graph_empty_kernel_us_per_kernel", median(v));
    // same with 132 blocks of 128 threads per kernel
    cudaGraph_t g2;
    cudaGraphExec_t ge2;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < NK; i++) empty_k<<<sms, 128, 0, s>>>();
    CK(cudaStreamEndCapture(s, &g2));
    CK(cudaGraphInstantiate(&ge2, g2, 0));
    CK(cudaGraphLaunch(ge2, s));
    CK(cudaStreamSynchronize(s));
    v.clear();
    for (int k = 0; k < 11; k++) {
      ev.start(s);
      CK(cudaGraphLaunch(ge2, s));
      v.push_back(ev.stop_ms(s) * 1e3 / NK);
    }
    r.num("graph_empty_kernel_full_wave_us_per_kernel", median(v));
  }
  {
    std::vector<double> v;
    for (int k = 0; k < 11; k++) {
      ev.start(s);
      for (int i = 0; i < NK; i++) empty_k<<<1, 32, 0, s>>>();
      v.push_back(ev.stop_ms(s) * 1e3 / NK);
    }
    CKL();
    r.num("stream_empty_kernel_us_per_kernel", median(v));
    v.clear();
    for (int k = 0; k < 200; k++) {
      auto t0 = std::chrono::steady_clock::now();
      empty_k<<<1, 32, 0, s>>>();
      CK(cudaStreamSynchronize(s));
      auto t1 = std::chrono::steady_clock::now();
      v.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    r.num("launch_and_sync_roundtrip_us", median(v));
  }
  std::vector<std::string> rows;
  const int NB = sms * 2000;
  for (int t : {32, 128, 256, 1024}) {
    empty_k<<<NB, t, 0, s>>>();
    CK(cudaStreamSynchronize(s));
    std::vector<double> v;
    for (int k = 0; k < 7; k++) {
      ev.start(s);
      empty_k<<<NB, t, 0, s>>>();
      v.push_back(ev.stop_ms(s));
    }
    CKL();
    double us = median(v) * 1e3;
    rows.push_back(Json().num("threads_per_block", t).num("blocks", NB).num("us", us)
                       .num("blocks_per_us", NB / us).num("blocks_per_us_per_sm", NB / us / sms).dump());
    if (t == 128) r.num("block_dispatch_blocks_per_us_128threads", NB / us);
  }
  r.raw("block_dispatch", jarr(rows));
  m.str("graph", "1000 empty kernels (1x32, and SMs x 128) captured into one CUDA graph; "
                 "replay time by CUDA events / 1000, median of 11")
      .str("stream", "1000 back-to-back launches of an empty 1x32 kernel; events / 1000, median of 11")
      .str("roundtrip", "host steady_clock around launch + cudaStreamSynchronize, median of 200")
      .str("block_dispatch", "one launch of SMs x 2000 empty blocks; events; median of 7");
  emit("launch", r, m);
  return 0;
}
