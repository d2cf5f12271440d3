// SM clock and device facts. A single thread spins on clock64() for a fixed
// number of cycles; the same interval is timed with %globaltimer inside the
// kernel and with CUDA events outside it. cycles / ns = SM clock.
#include "common.cuh"

__global__ void spin(long long cycles, Stamp* out) {
  long long c0 = clk();
  unsigned long long g0 = gtimer();
  while (clk() - c0 < cycles) {
  }
  long long c1 = clk();
  unsigned long long g1 = gtimer();
  if (threadIdx.x == 0) out[blockIdx.x] = {c0, c1, g0, g1, smid(), 0};
}

// Cost of reading clock64 back to back (overhead of the in-kernel timer).
__global__ void clock_overhead(long long* out) {
  long long best = 1 << 30;
  for (int i = 0; i < 64; i++) {
    long long a = clk();
    long long b = clk();
    best = min(best, b - a);
  }
  out[0] = best;
}

// globaltimer resolution: smallest nonzero step seen.
__global__ void gtimer_step(unsigned long long* out) {
  unsigned long long best = ~0ull, prev = gtimer();
  for (int i = 0; i < 100000; i++) {
    unsigned long long t = gtimer();
    if (t != prev) { best = min(best, t - prev); prev = t; }
  }
  out[0] = best;
}

int main() {
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, dev));
  int sms = p.multiProcessorCount;
  int clock_khz = 0, mem_khz = 0, busw = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&busw, cudaDevAttrGlobalMemoryBusWidth, dev);
  cudaGetLastError();
  int drv = 0, rt = 0;
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));

  Stamp* d;
  CK(cudaMalloc(&d, sizeof(Stamp) * sms));
  long long* dl;
  CK(cudaMalloc(&dl, 16));
  const long long cycles = 200000000LL;  // ~0.1 s at 2 GHz
  spin<<<1, 1>>>(cycles / 20, d);
  CKL();
  EvTimer ev;
  std::vector<double> mhz_gt, mhz_ev, mhz_all_gt;
  for (int r = 0; r < 5; r++) {
    ev.start();
    spin<<<1, 1>>>(cycles, d);
    float ms = ev.stop_ms();
    CKL();
    Stamp s;
    CK(cudaMemcpy(&s, d, sizeof s, cudaMemcpyDeviceToHost));
    mhz_gt.push_back(stamp_mhz(s));
    mhz_ev.push_back((double)(s.c1 - s.c0) / (ms * 1e3));
  }
  for (int r = 0; r < 3; r++) {
    spin<<<sms, 1>>>(cycles, d);
    CKL();
    std::vector<Stamp> s(sms);
    CK(cudaMemcpy(s.data(), d, sizeof(Stamp) * sms, cudaMemcpyDeviceToHost));
    std::vector<double> m;
    for (auto& x : s) m.push_back(stamp_mhz(x));
    mhz_all_gt.push_back(median(m));
  }
  clock_overhead<<<1, 1>>>(dl);
  CKL();
  long long ovh;
  CK(cudaMemcpy(&ovh, dl, 8, cudaMemcpyDeviceToHost));
  gtimer_step<<<1, 1>>>((unsigned long long*)dl);
  CKL();
  unsigned long long gstep;
  CK(cudaMemcpy(&gstep, dl, 8, cudaMemcpyDeviceToHost));

  Json r, m;
  r.str("device_name", p.name)
      .num("sm_count", sms)
      .num("compute_capability", p.major * 10 + p.minor)
      .num("sm_clock_attribute_mhz", clock_khz / 1000.0)
      .num("memory_clock_attribute_mhz", mem_khz / 1000.0)
      .num("memory_bus_width_bits", busw)
      .num("sm_clock_measured_globaltimer_mhz", median(mhz_gt))
      .num("sm_clock_measured_events_mhz", median(mhz_ev))
      .num("sm_clock_measured_all_sms_spinning_mhz", median(mhz_all_gt))
      .num("clock64_read_overhead_cycles", (double)ovh)
      .num("globaltimer_resolution_ns", (double)gstep)
      .num("l2_size_bytes", p.l2CacheSize)
      .num("persisting_l2_max_bytes", p.persistingL2CacheMaxSize)
      .num("shared_mem_per_sm_bytes", p.sharedMemPerMultiprocessor)
      .num("shared_mem_per_block_optin_bytes", p.sharedMemPerBlockOptin)
      .num("regs_per_sm", p.regsPerMultiprocessor)
      .num("max_threads_per_sm", p.maxThreadsPerMultiProcessor)
      .num("max_blocks_per_sm", p.maxBlocksPerMultiProcessor)
      .num("total_global_mem_bytes", (double)p.totalGlobalMem)
      .num("cuda_driver_version", drv)
      .num("cuda_runtime_version", rt);
  m.str("sm_clock",
        "one thread spins until clock64 advanced 2e8 cycles; clock = cycles / "
        "elapsed ns, elapsed from %globaltimer in the kernel and from CUDA "
        "events around the launch; median of 5 (all-SMs variant: one spinning "
        "thread per SM, median over SMs, median of 3). The GPU clock was left "
        "as found (no locking).")
      .str("device_attributes", "cudaGetDeviceProperties / cudaDeviceGetAttribute");
  emit("clock", r, m);
  return 0;
}
