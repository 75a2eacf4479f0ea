// `baton gguf synth --arch qwen35moe` and `baton gguf info` on hybrid files, run as the real
// binary.
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "support/run_baton.h"
#include "support/shared_files.h"

namespace baton::gguf {
namespace {

using testing::run_baton;

TEST(CliGgufHybrid, SynthQwen35MoeThenInfoShowsTheLayerPattern) {
  BATON_REQUIRE_BINARY();
  auto out = testing::scratch_dir() / "hybrid.gguf";
  auto r =
      run_baton("gguf synth '" + out.string() +
                "' --arch qwen35moe --embd 64 --layers 4 --heads 2 --kv-heads 1 "
                "--head-dim 32 --experts 4 --experts-used 2 --expert-ff 32 --shared-ff 64 "
                "--ssm-k-heads 1 --ssm-v-heads 2 --ssm-head-dim 16 --full-attention-interval 2 "
                "--type q8_0 --byte-vocab");
  ASSERT_EQ(r.status, 0) << r.output;
  auto f = GgufFile::open(out.string());
  EXPECT_EQ(f->get_string("general.architecture"), "qwen35moe");
  EXPECT_EQ(f->get_int("qwen35moe.ssm.inner_size"), 32);
  EXPECT_EQ(f->get_int("qwen35moe.full_attention_interval"), 2);
  // q|k|v of one key head and two value heads of 16; the attention layer's q rows hold gates.
  EXPECT_EQ(f->find_tensor("blk.0.attn_qkv.weight")->dims, (std::vector<uint64_t>{64, 64}));
  EXPECT_EQ(f->find_tensor("blk.1.attn_q.weight")->dims, (std::vector<uint64_t>{64, 128}));
  EXPECT_EQ(f->find_tensor("blk.2.ffn_up_shexp.weight")->dims, (std::vector<uint64_t>{64, 64}));
  EXPECT_EQ(f->find_tensor("blk.0.ssm_conv1d.weight")->type, TensorType::F32);

  r = run_baton("gguf info '" + out.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("layers: rara (2 recurrent r, 2 attention a; from "
                          "full_attention_interval 2)"),
            std::string::npos)
      << r.output;
  r = run_baton("run -m '" + out.string() + "' -n 4 -p hi --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(qwen35moe): 4 layers"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hybrid model: 2 of 4 layers are gated DeltaNet"), std::string::npos)
      << r.output;

  r = run_baton("gguf synth '" + out.string() + "' --arch qwen35moe --layers 2 --byte-vocab");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("--full-attention-interval 4 with --layers 2: no layer would attend"),
            std::string::npos)
      << r.output;
}

TEST(CliGgufHybrid, InfoOnTheReferenceFile) {
  BATON_REQUIRE_BINARY();
  BATON_REQUIRE_SHARED(path, "models/arch/synth-qwen35moe-Q8_0.gguf");
  auto r = run_baton("gguf info '" + path.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("layers: rrra (3 recurrent r, 1 attention a; from "
                          "full_attention_interval 4)"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace baton::gguf
