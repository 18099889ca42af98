// Thin RAII layer over the HDF5 C API: owned identifiers, files, attributes.
//
// Only storage/ includes HDF5. Every failure becomes a gpstream::Error naming
// the file and object concerned; HDF5's own error-stack printing is switched
// off so users see one line, not a stack dump.
#pragma once

#include "storage/output/atomic_output_file.h"

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpstream::hdf5 {

// An owned HDF5 identifier, closed with the function matching its type.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      closer_ = other.closer_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports failure (a close is where HDF5 flushes a file).
  void close(const std::string& what);

 private:
  void reset() noexcept {
    if (id_ >= 0) closer_(id_);
    id_ = H5I_INVALID_HID;
  }
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Checks an identifier returned by HDF5 and takes ownership of it.
Handle check_handle(hid_t id, Handle::Closer closer, const std::string& what);
// Checks an herr_t status.
void check_status(herr_t status, const std::string& what);

// Creates a file (truncating) with the 1.8 object format, whose dense
// attribute storage lifts the 64 KiB limit on attributes (feature names of
// wide datasets).
Handle create_file(const std::string& path);
// Writes a whole gpstream file as one unit: `contents` fills the root group
// of a temporary file (storage/output/atomic_output_file.h), which is then
// closed (HDF5 flushes there) and renamed into place. Any failure is one
// Error naming what the file is and its path — "cannot write the checkpoint
// 'ck.h5': HDF5 failed on alpha: No space left on device" — and leaves the
// previous file, if any, as it was. Its last attribute is the checksum of
// everything `contents` wrote (contents_checksum.h).
void write_file(const std::string& path, ExistingOutput existing, const std::string& what,
                const std::function<void(hid_t root)>& contents);
// Opens an existing file read-only, with a clear message for a missing,
// non-HDF5 or truncated file.
Handle open_file(const std::string& path);
// Whether `path` is a regular file in HDF5's format (its signature); false for anything else — a CSV
// whatever its name, and a pipe or device, whose contents are not read to find out.
bool is_hdf5_file(const std::string& path);

Handle open_dataset(hid_t file, const std::string& name, const std::string& file_path, hid_t access_list = H5P_DEFAULT);
// Throws unless the dataset holds numbers (floating point or integer, which
// HDF5 converts to double on reading), saying what it holds instead.
void check_numeric(hid_t dataset, const std::string& what);
// Process-wide HDF5 set-up, called first thing by main: its error-stack
// printing off (every failure is reported as a gpstream::Error instead) and
// no library clean-up at exit (which crashes after a failed write).
void initialise_library();
void silence_error_stack();
// The dimensions of a dataset's dataspace.
std::vector<hsize_t> dataset_dimensions(hid_t dataset, const std::string& what);

// A group, created or opened.
Handle create_group(hid_t parent, const std::string& name);
Handle open_group(hid_t parent, const std::string& name, const std::string& context);
bool has_link(hid_t parent, const std::string& name);

// A float64 vector dataset (chunked and shuffle+deflate compressed when
// `compression_level` > 0); the reader checks rank and, when
// `expected_size` is given, the length before allocating.
void write_vector(hid_t parent, const std::string& name, const std::vector<double>& values, int compression_level = 0);
std::vector<double> read_vector(hid_t parent, const std::string& name, const std::string& context,
                                std::optional<std::size_t> expected_size = std::nullopt);

// The root 'format' attribute of an HDF5 file ("gpstream-dataset", …);
// throws naming the file when it has none.
std::string read_format(hid_t file, const std::string& path);
// Whether `path` is an HDF5 file whose format is `format` (false for
// anything else, a missing or unreadable file included).
bool has_format(const std::string& path, const char* format);

// Who made a gpstream file and when: root attributes 'created_by'
// ("gpstream 0.1.0") and 'created_at' (UTC, ISO 8601). Older files may lack
// 'created_at'; the reader then returns "".
void write_creation_attributes(hid_t file);
struct FileOrigin {
  std::string created_by, created_at;
};
FileOrigin read_creation_attributes(hid_t file, const std::string& path);

// Checks the root 'format' and 'version' attributes of a gpstream file and
// returns the version; says clearly what was found instead.
std::int64_t check_format(hid_t file, const std::string& path, const char* format, std::int64_t newest_version);

bool has_attribute(hid_t object, const std::string& name);
void write_attribute(hid_t object, const std::string& name, const std::string& value);
void write_attribute(hid_t object, const std::string& name, std::int64_t value);
void write_attribute(hid_t object, const std::string& name, double value);
void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values);
void write_attribute(hid_t object, const std::string& name, const std::vector<std::string>& values);

// Readers check the attribute's type class and size before reading and
// throw naming `context` (the file) and the attribute when they do not fit.
std::string read_string_attribute(hid_t object, const std::string& name, const std::string& context);
std::int64_t read_integer_attribute(hid_t object, const std::string& name, const std::string& context);
double read_double_attribute(hid_t object, const std::string& name, const std::string& context);
std::vector<double> read_double_array_attribute(hid_t object, const std::string& name, const std::string& context);
std::vector<std::string> read_string_array_attribute(hid_t object, const std::string& name, const std::string& context);
// The attribute's type class (H5T_INTEGER, H5T_FLOAT, H5T_STRING, …).
H5T_class_t attribute_class(hid_t object, const std::string& name, const std::string& context);

}  // namespace gpstream::hdf5
