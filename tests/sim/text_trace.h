// Shared by the sim tests: a one-kernel trace written in the text format (traces/README.md).
#pragma once

#include "traces/trace.h"

#include <string>

namespace ltc::test_support {

// A one-kernel trace for a100-lut4x: `blocks` x 1 blocks of `warps` x 1 warps running `program`.
// `smem` holds every lds / sts of the tests' programs (the readers check each access's extent).
traces::Trace trace_of(const std::string& program, int blocks = 1, int warps = 1,
                       const std::string& tensors = "    tensor 0 a bytes=1048576\n",
                       int smem = 4096, int version = 2) {
  const std::string text =
      "ltc-trace " + std::to_string(version) +
      "\ngpu a100-lut4x\n"
      "core 0 {\"design\":\"lut\",\"m\":2,\"n\":64,\"k\":4,\"act\":\"int8\",\"wbits\":2} "
      "acts=int8,fp16\n"
      "kernel k\n  grid " +
      std::to_string(blocks) + " 1\n  block " + std::to_string(warps) +
      " 1\n  resources smem=" + std::to_string(smem) +
      " regs=32\n  tiles core=0 block=2,64,4 warp=2,64,4 instr=2,64,4\n" + tensors + "  program\n" +
      program + "  end\nend\n";
  return traces::read_text(text, "test.lmt");
}

}  // namespace ltc::test_support
