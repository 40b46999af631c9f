#include "transport/messages.hpp"

#include <sstream>

#include <cereal/archives/binary.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>

namespace cleansweep {
namespace {

template <typename T>
Result<Message> DecodeAs(const std::string& payload) {
  try {
    std::istringstream in(payload);
    cereal::BinaryInputArchive archive(in);
    T message;
    archive(message);
    return Message(std::move(message));
  } catch (const cereal::Exception& e) {
    return Status::RuntimeError(std::string("corrupt message: ") + e.what());
  }
}

}  // namespace

const char* TagName(Tag tag) {
  switch (tag) {
    case Tag::kHello:
      return "hello";
    case Tag::kSetup:
      return "setup";
    case Tag::kReady:
      return "ready";
    case Tag::kAssign:
      return "assign";
    case Tag::kStep:
      return "step";
    case Tag::kResult:
      return "result";
    case Tag::kStop:
      return "stop";
    case Tag::kPrune:
      return "prune";
    case Tag::kCheckpoint:
      return "checkpoint";
    case Tag::kRelease:
      return "release";
    case Tag::kAbort:
      return "abort";
    case Tag::kSuggest:
      return "suggest";
    case Tag::kSuggestReply:
      return "suggest reply";
  }
  return "?";
}

Tag TagOf(const Message& message) { return static_cast<Tag>(message.index() + 1); }

std::string Encode(const Message& message) {
  std::ostringstream out;
  {
    cereal::BinaryOutputArchive archive(out);
    std::visit([&](const auto& m) { archive(m); }, message);
  }
  return out.str();
}

Result<Message> Decode(int tag, const std::string& payload) {
  switch (static_cast<Tag>(tag)) {
    case Tag::kHello:
      return DecodeAs<HelloMsg>(payload);
    case Tag::kSetup:
      return DecodeAs<SetupMsg>(payload);
    case Tag::kReady:
      return DecodeAs<ReadyMsg>(payload);
    case Tag::kAssign:
      return DecodeAs<AssignMsg>(payload);
    case Tag::kStep:
      return DecodeAs<StepMsg>(payload);
    case Tag::kResult:
      return DecodeAs<ResultMsg>(payload);
    case Tag::kStop:
      return DecodeAs<StopMsg>(payload);
    case Tag::kPrune:
      return DecodeAs<PruneMsg>(payload);
    case Tag::kCheckpoint:
      return DecodeAs<CheckpointMsg>(payload);
    case Tag::kRelease:
      return DecodeAs<ReleaseMsg>(payload);
    case Tag::kAbort:
      return DecodeAs<AbortMsg>(payload);
    case Tag::kSuggest:
      return DecodeAs<SuggestMsg>(payload);
    case Tag::kSuggestReply:
      return DecodeAs<SuggestReplyMsg>(payload);
  }
  return Status::RuntimeError("message with unknown tag " + std::to_string(tag));
}

}  // namespace cleansweep
