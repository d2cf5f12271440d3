// The decode attention plan (tiling/decode_attention.h) and its estimate, by hand.
#include "model/tiling/decode_attention.h"

#include "common/error.h"
#include "model/hw/gpu.h"

#include <gtest/gtest.h>

#include <string>

namespace ltc::tiling {
namespace {

// DeepSeek-V2's absorbed decode: 128 heads over one latent KV head of 512 + 64 elements.
DecodeAttentionShape deepseek_v2(int64_t batch, int64_t kv_len) {
  DecodeAttentionShape a;
  a.batch = batch;
  a.heads = 128;
  a.kv_heads = 1;
  a.kv_len = kv_len;
  a.head_dim = 576;
  a.v_dim = 512;
  a.latent = true;
  return a;
}

// On the H200 (227 KiB per block): 128 rows do not fit one block (more than 64 rows), two blocks
// of 64 do. O of 64 rows x 512 columns in FP32 over 8 warps is 64 * 512 / (8 * 32) = 128
// registers per thread (+ 64). Shared memory: two 64-key stages of 1152-byte rows (147,456),
// P (64 x 64 x 2 = 8,192) and the maxima (64 x 8 x 4 = 2,048), Q (64 x 1152 = 73,728): 231,424
// of 232,448. Splits: 2 units want min(132 / 2, 4097 / 256) = 17; of 17..34 the first that
// divides the 64 whole tiles is 32 (2 tiles each); the last key is the combine's, which runs per
// 16 rows (8 chunks) and merges min(32, (232,448 - 16 x 1152 - 16 x (128 + 32)) / (16 x 514 x 4))
// = 6 splits per pass.
TEST(DecodeAttention, DeepSeekV2OnTheH200SplitsItsHeadsOverTwoBlocks) {
  const hw::GpuConfig h200 = hw::load_gpu("h200");
  const DecodeAttentionPlan d = plan_decode_attention(deepseek_v2(1, 4097), h200);
  EXPECT_TRUE(d.value_split);
  EXPECT_EQ(d.groups, 1);
  EXPECT_EQ(d.row_blocks, 2);
  EXPECT_EQ(d.rows, 64);
  EXPECT_EQ(d.mtiles, 4);
  EXPECT_EQ(d.warps, 8);
  EXPECT_EQ(d.registers, 192);
  EXPECT_EQ(d.key_tile, 64);
  EXPECT_EQ(d.smem_stages, 147456);
  EXPECT_EQ(d.smem_exchange, 10240);
  EXPECT_EQ(d.smem_q, 73728);
  EXPECT_EQ(d.smem_bytes(), 231424);
  EXPECT_EQ(d.splits, 32);
  EXPECT_EQ(d.tiles_per_split, 2);
  EXPECT_EQ(d.rest_tiles, 0);
  EXPECT_EQ(d.rest_keys, 1);
  EXPECT_EQ(d.chunk_rows, 16);
  EXPECT_EQ(d.chunks, 8);
  EXPECT_EQ(d.merge, 6);
  EXPECT_EQ(d.blocks(), 64);
  const DecodeAttentionPlan c = value_split_combine(d);
  EXPECT_EQ(c.rows, 16);
  EXPECT_EQ(c.row_blocks, 8);
  EXPECT_EQ(c.smem_q, 16 * 1152);
  EXPECT_EQ(c.smem_exchange, 16 * (64 * 2 + 8 * 4));
  EXPECT_EQ(c.smem_stages, 6 * 32896);  // the stages' buffer grown to 6 splits' partials
  EXPECT_LE(c.smem_bytes(), 227 * 1024);
}

// On the A100 (163 KiB, no warpgroup MMA): 64 rows need 8 warps and 64-key tiles (8 keys a
// warp), 231,424 bytes; two blocks of 64 do not fit, four of 32 do: O of 32 x 512 over 4 warps is
// 128 registers, and with 32-key tiles 2 x 32 x 1152 + 32 x (32 x 2 + 4 x 4) + 32 x 1152 =
// 113,152 bytes (64-key tiles: 188,928, too many).
TEST(DecodeAttention, DeepSeekV2OnTheA100TakesFourBlocksOf32Rows) {
  const hw::GpuConfig a100 = hw::load_gpu("a100");
  const DecodeAttentionPlan d = plan_decode_attention(deepseek_v2(8, 1000), a100);
  EXPECT_EQ(d.row_blocks, 4);
  EXPECT_EQ(d.rows, 32);
  EXPECT_EQ(d.warps, 4);
  EXPECT_EQ(d.key_tile, 32);
  EXPECT_EQ(d.smem_bytes(), 113152);
  EXPECT_EQ(d.groups, 8);
  EXPECT_EQ(d.units(), 32);
}

// A GQA group (LLaMA2-7B, 32 heads over 32 KV heads, head dim 128) keeps the key split: 4 warps,
// 64-key tiles of K and V (2 x 64 x 512 = 65,536 bytes, more than the warps' partials 4 x 16 x
// 130 x 4), one row per group; 32 units want min(108 / 32, 1025 / 256) = 4 splits, which divide
// the 16 whole tiles; the combine merges all 4 partials of 130 x 4 bytes at once.
TEST(DecodeAttention, AGqaGroupKeepsTheKeySplit) {
  const hw::GpuConfig a100 = hw::load_gpu("a100");
  DecodeAttentionShape a;
  a.heads = a.kv_heads = 32;
  a.kv_len = 1025;
  a.head_dim = a.v_dim = 128;
  const DecodeAttentionPlan d = plan_decode_attention(a, a100);
  EXPECT_FALSE(d.value_split);
  EXPECT_EQ(d.row_blocks, 1);
  EXPECT_EQ(d.rows, 1);
  EXPECT_EQ(d.warps, 4);
  EXPECT_EQ(d.key_tile, 64);
  EXPECT_EQ(d.smem_stages, 65536);
  EXPECT_EQ(d.smem_exchange, 0);
  EXPECT_EQ(d.smem_q, 256);
  EXPECT_EQ(d.splits, 4);
  EXPECT_EQ(d.tiles_per_split, 4);
  EXPECT_EQ(d.rest_keys, 1);
  EXPECT_EQ(d.merge, 4);
}

// Shared memory too small for any layout: the error names the group and the GPU's limit.
TEST(DecodeAttention, NoLayoutThatFitsIsRefusedNamingTheGroup) {
  hw::GpuConfig tiny = hw::load_gpu("a100");
  tiny.shared_memory_kb_per_block = 16;
  DecodeAttentionShape gqa;
  gqa.heads = 32;
  gqa.kv_heads = 4;
  gqa.kv_len = 100;
  gqa.head_dim = gqa.v_dim = 128;
  for (const DecodeAttentionShape& a : {gqa, deepseek_v2(1, 100)}) {
    try {
      plan_decode_attention(a, tiny);
      FAIL() << "planned";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::to_string(a.heads) + " heads over " + std::to_string(a.kv_heads)),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("16 KiB per block"), std::string::npos) << what;
    }
  }
}

// DeepSeek-V2 at batch 256 on the H200, by hand: 512 blocks of 8 warps, one per SM (231 KB), 4
// waves, 64 + 1 key tiles each (4097 keys, one split). Per tile: S = 4 row tiles x 8 key columns x
// 36 K steps = 1152 MMAs and O = 4 x 64 x 4 = 1024 MMAs, 4 cycles each (4096 flops at 989
// TFLOP/s over 528 tensor cores at 1.829 GHz) on 4 tensor cores; the shared-memory path
// (128 B/cycle, TMA fills) for S: K 64 x 1152 + Q twice (8 warps, warpgroups of 4) 2 x 73,728 =
// 221,184 bytes, for O: V 64 x 1024 + P twice 2 x 8192 + the maxima traded 8 x 64 x 4 x 9 + P
// stored 8192 = 108,544 bytes; the softmax 8 warps x (6144 lane ops / 128 lanes + 512 SFU ops /
// 16); four barriers of 24 + 23 cycles.
TEST(DecodeAttention, TheEstimateOfAValueSplitKernelByHand) {
  const hw::GpuConfig h200 = hw::load_gpu("h200");
  const DecodeAttentionPlan d = plan_decode_attention(deepseek_v2(256, 4097), h200);
  ASSERT_EQ(d.blocks(), 512);
  ASSERT_EQ(d.splits, 1);
  const DecodeAttentionEstimate e = estimate_decode_attention(d, h200, "fp16");
  const double t_s = 1152 * 4 / 4.0, t_o = 1024 * 4 / 4.0;
  const double l_s = 221184 / 128.0, l_o = 108544 / 128.0;
  const double softmax = 8 * (6144 / 128.0 + 512 / 16.0);
  const double round = std::max(t_s, l_s) + softmax + std::max(t_o, l_o) + 4 * (24 + 23);
  EXPECT_DOUBLE_EQ(e.cycles, 4 * 65 * round);
  EXPECT_DOUBLE_EQ(e.tensor_cycles, 4 * 65 * (t_s + t_o));
  EXPECT_DOUBLE_EQ(e.clock_ghz, h200.loaded_clock_ghz((t_s + t_o) / round));
  EXPECT_DOUBLE_EQ(e.in_flight_bytes, 132 * 64 * 1152.0);
}

}  // namespace
}  // namespace ltc::tiling
