// One RAII owner for every HDF5 identifier, and checked calls that carry the HDF5 error stack into
// a Status. Only the study layer includes it (and so hdf5.h): cmake/Layers.cmake.
#pragma once

#include <string>
#include <utility>

#include <hdf5.h>

#include "util/status.hpp"

namespace cleansweep::h5 {

// Owns an hid_t and closes it with the matching H5?close (H5Oclose does not cover types/spaces).
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      Reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { Reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void Reset();
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }  // left open, on purpose

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// H5dont_atexit: no library shutdown at process exit (StudyFile's KeepHdf5OpenAtExit says why).
void DontCloseAtExit();

// Silences HDF5's own printing of error stacks (we report them as Status instead). Idempotent.
void QuietErrors();

// The innermost messages of the current HDF5 error stack, e.g. "unable to open file: file locked".
std::string ErrorStackText();

// IoError "what (HDF5: <stack>)" when `id` < 0, else the handle.
Result<Handle> CheckId(hid_t id, const std::string& what);
// IoError when `rc` < 0.
Status CheckCall(herr_t rc, const std::string& what);

// How often HDF5 reads a piece of metadata whose checksum fails before it gives up. Under SWMR
// its default is 100, with sleeps doubling from 1 ns: a damaged file then "hangs" for hours
// (4 s, 8 s, 17 s, ...). 20 attempts sleep ~1 ms in all; a read that races the writer is retried
// by the reader as a whole instead (ReadStudyFile).
inline constexpr unsigned kMetadataReadAttempts = 20;

// File access properties with the bounded metadata retries above; `latest_format` for writers.
Handle FileAccess(bool latest_format);

// Opens `path` read-only: SWMR reading first (a file being written, or left by a killed writer),
// else plainly (files of schema 1). Bounded in time on damaged files.
Result<Handle> OpenForReading(const std::string& path);

// For the calls that build types and property lists: they fail only on a programmer error (a
// wrong argument) or when memory runs out, so a failure stops the program where it happened.
inline void Must(herr_t rc) { CS_CHECK(rc >= 0); }

// The number of rows of a 1-D dataset; IoError (with the HDF5 stack) when it cannot be read.
Result<hsize_t> RowCount(hid_t dataset, const std::string& what);

// A vlen UTF-8 string type, the form h5py reads back as str.
Handle VarString();
// A fixed-width, NUL-padded UTF-8 string type of `length` bytes (h5py reads it as bytes).
Handle FixedString(size_t length);

// Scalar attributes on an object.
Status WriteAttr(hid_t object, const char* name, const std::string& value);
Status WriteAttr(hid_t object, const char* name, long long value);
// A string attribute of a fixed `size` bytes, which a SWMR writer may rewrite in place (it cannot
// create one): created if missing, else overwritten; `value` is cut to fit on a character boundary.
Status WriteFixedStringAttr(hid_t object, const char* name, const std::string& value, size_t size);
Result<std::string> ReadStringAttr(hid_t object, const char* name);
// Removes attribute `name` when it exists (attributes cannot be rewritten with another size).
Status DeleteAttrIfPresent(hid_t object, const char* name);
Result<long long> ReadIntAttr(hid_t object, const char* name);

}  // namespace cleansweep::h5
