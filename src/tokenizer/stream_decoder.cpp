#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace baton::tokenizer {
namespace {

// Moves the complete characters at the front of `pending` into the result; ill-formed subparts
// become U+FFFD. A truncated tail stays pending unless `final` is set.
std::string drain(std::string& pending, bool final) {
  std::string out;
  size_t i = 0;
  while (i < pending.size()) {
    const auto s = utf8::scan(pending, i);
    if (s.status == utf8::Status::Complete) {
      out.append(pending, i, s.len);
    } else if (s.status == utf8::Status::Invalid || final) {
      out += utf8::kReplacement;
    } else {
      break;
    }
    i += s.len;
  }
  pending.erase(0, i);
  return out;
}

}  // namespace

std::string sanitize_utf8(std::string_view s) {
  std::string copy(s);
  return drain(copy, true);
}

StreamDecoder::StreamDecoder(const Tokenizer& t, bool skip_special)
    : tok_(t), skip_special_(skip_special), strip_space_(t.strips_space_after_special()) {}

std::string StreamDecoder::push(int32_t id) {
  pending_ += tok_.decode_piece(id, skip_special_, strip_space_);
  return drain(pending_, false);
}

std::string StreamDecoder::flush() {
  return drain(pending_, true);
}

}  // namespace baton::tokenizer
