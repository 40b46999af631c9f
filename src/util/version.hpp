#pragma once

namespace cleansweep {

// Set from project(VERSION) in CMakeLists.txt.
inline constexpr const char* kVersion = CLEANSWEEP_VERSION;

}  // namespace cleansweep
