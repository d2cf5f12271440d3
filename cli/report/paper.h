// The LUT Tensor Core paper's published figures (Mo et al., ISCA'25) the report sets ours beside,
// where model/roofline/paper_figures.h does not already hold them. Paper values, not results.
#pragma once

namespace ltc::report::paper {

// Table III: speedup over A100 FP16 (LLaMA 3B) of BitNet b1.58 3B W_INT2 A_INT8 in its two
// latency columns (119.70 / 51.75 ms on A100).
inline constexpr double kTable3A100Ms[2] = {119.70, 51.75};
inline constexpr double kTable3Lut4xMs[2] = {42.49, 11.41};
inline constexpr double kTable3Lut8xMs[2] = {38.02, 7.47};
inline constexpr double kTable3DensityGain = 20.9;      // TOPs/mm2, LUT-4X over A100 FP16
inline constexpr double kTable3EfficiencyGain = 11.2;   // TOPs/W
inline constexpr double kTable3Lut4xAreaShare = 0.192;  // tensor-core area vs A100's
inline constexpr double kTable3Lut8xAreaShare = 0.383;

// The authors' own GEMM (W_INT2 A_FP16 M=4096 N=27648 K=5120 on A100-LUT-4X) in their
// Accel-Sim run: its cycles and wall time (253 cycles/s).
inline constexpr long kAccelSimGemmCycles = 804234;
inline constexpr double kAccelSimGemmWallS = 3168;

// The kernel experiment (LLaMA2-13B mpGEMM W_INT1 A_FP16): the LUT tensor core matches the MAC's
// speed at this share of its tensor-core area, and with more registers is this much faster at
// this much more area.
inline constexpr double kKernelLutMatchesMacAtArea = 0.143;
inline constexpr double kKernelMoreRegistersSpeedup = 6.9;
inline constexpr double kKernelMoreRegistersExtraArea = 0.316;

// Figure 16: W_INT1 A_INT8 peak up to 16x the FP16 tensor core; end to end up to 8.2x.
inline constexpr double kFig16PeakGain = 16.0;
inline constexpr double kFig16EndToEndGain = 8.2;

// Table I: precompute overhead over the kernels alone, unfused and fused (from kTableI).
// BitLLM (mobile GPUs): decode speedup over FP16 at W8A8 and W4A8, against the ideal 2x / 4x.
inline constexpr double kBitLlmW8A8 = 1.66;
inline constexpr double kBitLlmW4A8 = 2.36;

}  // namespace ltc::report::paper
