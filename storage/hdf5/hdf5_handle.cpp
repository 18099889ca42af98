#include "storage/hdf5/hdf5_handle.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "storage/hdf5/contents_checksum.h"

#include <algorithm>
#include <array>
#include <ctime>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace gpstream::hdf5 {
namespace {

// Why the system refused a write HDF5 reports only as failed: ": No space left
// on device" when errno says so (HDF5 keeps it from the failing call).
std::string system_reason() {
  const int error = errno;
  switch (error) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EIO:
    case EROFS:
    case EACCES:
      return std::string(": ") + std::strerror(error);
    default:
      return "";
  }
}

Handle string_type() {
  Handle type = check_handle(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check_status(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
  return type;
}

Handle scalar_space() { return check_handle(H5Screate(H5S_SCALAR), H5Sclose, "scalar dataspace"); }

Handle vector_space(std::size_t length) {
  // HDF5 1.10 cannot create attributes over a zero-length simple dataspace;
  // an empty list is a null dataspace (0 elements, readable by h5py as empty).
  if (length == 0) return check_handle(H5Screate(H5S_NULL), H5Sclose, "empty dataspace");
  const hsize_t dims[1] = {static_cast<hsize_t>(length)};
  return check_handle(H5Screate_simple(1, dims, nullptr), H5Sclose, "dataspace");
}

Handle create_attribute(hid_t object, const std::string& name, hid_t type, hid_t space) {
  if (H5Aexists(object, name.c_str()) > 0) check_status(H5Adelete(object, name.c_str()), "attribute " + name);
  return check_handle(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                      "attribute " + name);
}

struct OpenAttribute {
  Handle attribute;
  Handle type;
  Handle space;
  hssize_t elements = 0;
};

OpenAttribute open_attribute(hid_t object, const std::string& name, const std::string& context) {
  GPSTREAM_CHECK(has_attribute(object, name), "{}: attribute '{}' is missing", context, name);
  OpenAttribute result;
  result.attribute =
      check_handle(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose, context + ": attribute " + name);
  result.type = check_handle(H5Aget_type(result.attribute.get()), H5Tclose, context + ": attribute " + name);
  result.space = check_handle(H5Aget_space(result.attribute.get()), H5Sclose, context + ": attribute " + name);
  result.elements = H5Sget_simple_extent_npoints(result.space.get());
  GPSTREAM_CHECK(result.elements >= 0, "{}: attribute '{}' has an unreadable shape", context, name);
  return result;
}

void require_class(const OpenAttribute& attribute, H5T_class_t expected, const char* expected_name,
                   const std::string& name, const std::string& context) {
  GPSTREAM_CHECK(H5Tget_class(attribute.type.get()) == expected, "{}: attribute '{}' is not {}", context, name,
                 expected_name);
}

std::vector<std::string> read_strings(const OpenAttribute& attribute, const std::string& name,
                                      const std::string& context) {
  require_class(attribute, H5T_STRING, "text", name, context);
  const std::size_t count = static_cast<std::size_t>(attribute.elements);
  std::vector<std::string> result;
  if (count == 0) return result;
  result.reserve(count);
  if (H5Tis_variable_str(attribute.type.get()) > 0) {
    Handle memory_type = string_type();
    std::vector<char*> pointers(count, nullptr);
    check_status(H5Aread(attribute.attribute.get(), memory_type.get(), pointers.data()),
                 context + ": attribute " + name);
    for (char* text : pointers) result.emplace_back(text == nullptr ? "" : text);
    H5Dvlen_reclaim(memory_type.get(), attribute.space.get(), H5P_DEFAULT, pointers.data());
  } else {
    // Fixed-length strings, as other tools (h5py's np.bytes_) may write them.
    const std::size_t width = H5Tget_size(attribute.type.get());
    std::vector<char> buffer(count * width + 1, '\0');
    check_status(H5Aread(attribute.attribute.get(), attribute.type.get(), buffer.data()),
                 context + ": attribute " + name);
    for (std::size_t i = 0; i < count; ++i) {
      const char* start = buffer.data() + i * width;
      result.emplace_back(start, strnlen(start, width));
    }
  }
  return result;
}

}  // namespace

void Handle::close(const std::string& what) {
  if (id_ < 0) return;
  const herr_t status = closer_(id_);
  id_ = H5I_INVALID_HID;
  check_status(status, what);
}

Handle check_handle(hid_t id, Handle::Closer closer, const std::string& what) {
  GPSTREAM_CHECK(id >= 0, "HDF5 failed on {}{}", what, system_reason());
  return Handle(id, closer);
}

void check_status(herr_t status, const std::string& what) {
  GPSTREAM_CHECK(status >= 0, "HDF5 failed on {}{}", what, system_reason());
}

Handle create_file(const std::string& path) {
  silence_error_stack();
  Handle access = check_handle(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access list");
  check_status(H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST), "file access list");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
  GPSTREAM_CHECK(file >= 0, "cannot create HDF5 file '{}'", path);
  return Handle(file, H5Fclose);
}

void write_file(const std::string& path, ExistingOutput existing, const std::string& what,
                const std::function<void(hid_t root)>& contents) {
  try {
    AtomicOutputFile output(path, existing);
    {
      Handle file = create_file(output.temporary_path());
      contents(file.get());
      write_attribute(file.get(), kContentsChecksum, contents_checksum(file.get(), path));
      file.close("the file");
    }
    output.commit();
  } catch (const Cancelled&) {
    throw;
  } catch (const Error& error) {
    throw Error(fmt::format("cannot write the {} '{}': {}", what, path, error.what()), error.source_file(),
                error.source_line());
  }
}

bool is_hdf5_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return false;  // a pipe's contents are not read to find out
  std::ifstream stream(path, std::ios::binary);
  constexpr std::array<char, 8> kSignature = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  std::array<char, 8> head{};
  stream.read(head.data(), head.size());
  if (stream.gcount() == 8 && head == kSignature) return true;
  silence_error_stack();
  return H5Fis_hdf5(path.c_str()) > 0;
}

Handle open_file(const std::string& path) {
  silence_error_stack();
  namespace fs = std::filesystem;
  std::error_code error;
  GPSTREAM_CHECK(fs::exists(path, error), "'{}' does not exist", path);
  GPSTREAM_CHECK(!fs::is_directory(path, error), "'{}' is a directory, not an HDF5 file", path);
  std::ifstream stream(path, std::ios::binary);
  GPSTREAM_CHECK(stream.good(), "cannot read '{}'", path);
  // The HDF5 signature sits at offset 0 for every file gpstream writes; HDF5
  // itself also looks at 512, 1024, ... (user blocks), so defer to it below.
  constexpr std::array<char, 8> kSignature = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  std::array<char, 8> head{};
  stream.read(head.data(), head.size());
  const bool has_signature = stream.gcount() == 8 && head == kSignature;
  if (!has_signature && H5Fis_hdf5(path.c_str()) <= 0) {
    GPSTREAM_THROW("'{}' is not an HDF5 file", path);
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  GPSTREAM_CHECK(file >= 0, "'{}' is a damaged or truncated HDF5 file (HDF5 cannot open it)", path);
  return Handle(file, H5Fclose);
}

Handle open_dataset(hid_t file, const std::string& name, const std::string& file_path, hid_t access_list) {
  GPSTREAM_CHECK(H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0, "{}: dataset '{}' is missing", file_path, name);
  const hid_t dataset = H5Dopen2(file, name.c_str(), access_list);
  GPSTREAM_CHECK(dataset >= 0, "{}: cannot open dataset '{}'", file_path, name);
  return Handle(dataset, H5Dclose);
}

void initialise_library() {
  // HDF5 closes what is still open from an atexit handler; after a failed
  // write (a full disk) that close crashes in HDF5 1.10. Every file gpstream
  // writes is closed explicitly before it is published, so nothing is lost
  // by leaving the rest to the operating system.
  H5dont_atexit();
  silence_error_stack();
}

// HDF5 prints its error stack to stderr by default; we report errors ourselves.
void silence_error_stack() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

void check_numeric(hid_t dataset, const std::string& what) {
  Handle type = check_handle(H5Dget_type(dataset), H5Tclose, what);
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (type_class == H5T_FLOAT || type_class == H5T_INTEGER) return;
  const char* held = type_class == H5T_STRING     ? "strings"
                     : type_class == H5T_COMPOUND ? "compound records"
                     : type_class == H5T_ENUM     ? "enumerated values"
                     : type_class == H5T_ARRAY    ? "arrays"
                                                  : "values that are not numbers";
  GPSTREAM_THROW(
      "{} holds {}, not numbers: a gpstream dataset stores float64 values (write them as float64, or "
      "convert a CSV with gpstream convert)",
      what, held);
}

std::vector<hsize_t> dataset_dimensions(hid_t dataset, const std::string& what) {
  Handle space = check_handle(H5Dget_space(dataset), H5Sclose, what);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  GPSTREAM_CHECK(rank >= 0, "{}: unreadable shape", what);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check_status(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), what);
  return dims;
}

Handle create_group(hid_t parent, const std::string& name) {
  return check_handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                      "group " + name);
}

Handle open_group(hid_t parent, const std::string& name, const std::string& context) {
  GPSTREAM_CHECK(has_link(parent, name), "{}: group '{}' is missing", context, name);
  return check_handle(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose, context + ": group " + name);
}

bool has_link(hid_t parent, const std::string& name) { return H5Lexists(parent, name.c_str(), H5P_DEFAULT) > 0; }

void write_vector(hid_t parent, const std::string& name, const std::vector<double>& values, int compression_level) {
  const hsize_t dims[1] = {static_cast<hsize_t>(values.size())};
  Handle space = check_handle(H5Screate_simple(1, dims, nullptr), H5Sclose, name);
  Handle properties = check_handle(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, name);
  if (compression_level > 0 && !values.empty()) {
    const hsize_t chunk[1] = {std::min<hsize_t>(dims[0], 1u << 17)};
    check_status(H5Pset_chunk(properties.get(), 1, chunk), name);
    check_status(H5Pset_shuffle(properties.get()), name);
    check_status(H5Pset_deflate(properties.get(), static_cast<unsigned>(compression_level)), name);
  }
  Handle dataset = check_handle(
      H5Dcreate2(parent, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, properties.get(), H5P_DEFAULT),
      H5Dclose, name);
  if (!values.empty()) {
    check_status(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), name);
  }
}

std::vector<double> read_vector(hid_t parent, const std::string& name, const std::string& context,
                                std::optional<std::size_t> expected_size) {
  Handle dataset = open_dataset(parent, name, context);
  const std::vector<hsize_t> dims = dataset_dimensions(dataset.get(), context + ": " + name);
  GPSTREAM_CHECK(dims.size() == 1, "{}: '{}' should be a vector but has {} dimensions", context, name, dims.size());
  GPSTREAM_CHECK(!expected_size || dims[0] == *expected_size, "{}: '{}' has {} values where {} were expected", context,
                 name, dims[0], expected_size.value_or(0));
  std::vector<double> values(static_cast<std::size_t>(dims[0]));
  if (!values.empty()) {
    GPSTREAM_CHECK(H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0,
                   "{}: cannot read '{}' (is the file damaged?)", context, name);
  }
  return values;
}

std::string read_format(hid_t file, const std::string& path) {
  GPSTREAM_CHECK(has_attribute(file, "format"),
                 "'{}' is an HDF5 file but not a gpstream file (it has no 'format' attribute)", path);
  return read_string_attribute(file, "format", path);
}

void write_creation_attributes(hid_t file) {
  write_attribute(file, "created_by", std::string("gpstream " GPSTREAM_VERSION));
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  write_attribute(file, "created_at", std::string(text));
}

FileOrigin read_creation_attributes(hid_t file, const std::string& path) {
  FileOrigin origin;
  if (has_attribute(file, "created_by")) origin.created_by = read_string_attribute(file, "created_by", path);
  if (has_attribute(file, "created_at")) origin.created_at = read_string_attribute(file, "created_at", path);
  return origin;
}

std::int64_t check_format(hid_t file, const std::string& path, const char* format, std::int64_t newest_version) {
  const std::string found = read_format(file, path);
  GPSTREAM_CHECK(found == format, "'{}' is a '{}' file, not a {}", path, found, format);
  const std::int64_t version = read_integer_attribute(file, "version", path);
  GPSTREAM_CHECK(version >= 1 && version <= newest_version,
                 "'{}' is {} version {}; this gpstream reads versions 1 to {}", path, format, version, newest_version);
  return version;
}

bool has_format(const std::string& path, const char* format) {
  try {
    Handle file = open_file(path);
    return read_format(file.get(), path) == format;
  } catch (const Error&) {
    return false;
  }
}

bool has_attribute(hid_t object, const std::string& name) { return H5Aexists(object, name.c_str()) > 0; }

void write_attribute(hid_t object, const std::string& name, const std::string& value) {
  Handle type = string_type();
  Handle space = scalar_space();
  Handle attribute = create_attribute(object, name, type.get(), space.get());
  const char* text = value.c_str();
  check_status(H5Awrite(attribute.get(), type.get(), &text), "attribute " + name);
}

void write_attribute(hid_t object, const std::string& name, std::int64_t value) {
  Handle space = scalar_space();
  Handle attribute = create_attribute(object, name, H5T_STD_I64LE, space.get());
  check_status(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), "attribute " + name);
}

void write_attribute(hid_t object, const std::string& name, double value) {
  Handle space = scalar_space();
  Handle attribute = create_attribute(object, name, H5T_IEEE_F64LE, space.get());
  check_status(H5Awrite(attribute.get(), H5T_NATIVE_DOUBLE, &value), "attribute " + name);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values) {
  Handle space = vector_space(values.size());
  Handle attribute = create_attribute(object, name, H5T_IEEE_F64LE, space.get());
  if (!values.empty()) check_status(H5Awrite(attribute.get(), H5T_NATIVE_DOUBLE, values.data()), "attribute " + name);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<std::string>& values) {
  // Variable-length strings cost a global-heap object each (~24 bytes beyond the text): for a long list
  // of similar names (100,000 inputs "x1" … "x100000") fixed-length strings as wide as the longest are
  // a third of that. Readers take either (read_strings); short lists stay variable-length, as h5py writes.
  constexpr std::size_t kHeapObjectBytes = 24, kShortList = 4096;
  std::size_t widest = 1, total = 0;
  for (const std::string& value : values) {
    widest = std::max(widest, value.size());
    total += value.size();
  }
  if (values.size() > kShortList && widest * values.size() < total + kHeapObjectBytes * values.size()) {
    Handle type = check_handle(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
    check_status(H5Tset_size(type.get(), widest), "string type");
    check_status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "string type");
    check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
    Handle space = vector_space(values.size());
    Handle attribute = create_attribute(object, name, type.get(), space.get());
    std::vector<char> packed(checked_multiply(values.size(), widest), '\0');
    for (std::size_t i = 0; i < values.size(); ++i) {
      std::memcpy(packed.data() + i * widest, values[i].data(), values[i].size());
    }
    check_status(H5Awrite(attribute.get(), type.get(), packed.data()), "attribute " + name);
    return;
  }
  Handle type = string_type();
  Handle space = vector_space(values.size());
  Handle attribute = create_attribute(object, name, type.get(), space.get());
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const std::string& value : values) pointers.push_back(value.c_str());
  if (!values.empty()) check_status(H5Awrite(attribute.get(), type.get(), pointers.data()), "attribute " + name);
}

std::string read_string_attribute(hid_t object, const std::string& name, const std::string& context) {
  OpenAttribute attribute = open_attribute(object, name, context);
  GPSTREAM_CHECK(attribute.elements == 1, "{}: attribute '{}' should hold one text, not {}", context, name,
                 attribute.elements);
  return read_strings(attribute, name, context).front();
}

std::int64_t read_integer_attribute(hid_t object, const std::string& name, const std::string& context) {
  OpenAttribute attribute = open_attribute(object, name, context);
  require_class(attribute, H5T_INTEGER, "an integer", name, context);
  GPSTREAM_CHECK(attribute.elements == 1, "{}: attribute '{}' should hold one integer, not {}", context, name,
                 attribute.elements);
  std::int64_t value = 0;
  check_status(H5Aread(attribute.attribute.get(), H5T_NATIVE_INT64, &value), context + ": attribute " + name);
  return value;
}

double read_double_attribute(hid_t object, const std::string& name, const std::string& context) {
  const std::vector<double> values = read_double_array_attribute(object, name, context);
  GPSTREAM_CHECK(values.size() == 1, "{}: attribute '{}' should hold one number, not {}", context, name, values.size());
  return values.front();
}

std::vector<double> read_double_array_attribute(hid_t object, const std::string& name, const std::string& context) {
  OpenAttribute attribute = open_attribute(object, name, context);
  require_class(attribute, H5T_FLOAT, "floating point", name, context);
  std::vector<double> values(static_cast<std::size_t>(attribute.elements));
  if (!values.empty()) {
    check_status(H5Aread(attribute.attribute.get(), H5T_NATIVE_DOUBLE, values.data()), context + ": attribute " + name);
  }
  return values;
}

std::vector<std::string> read_string_array_attribute(hid_t object, const std::string& name,
                                                     const std::string& context) {
  OpenAttribute attribute = open_attribute(object, name, context);
  return read_strings(attribute, name, context);
}

H5T_class_t attribute_class(hid_t object, const std::string& name, const std::string& context) {
  return H5Tget_class(open_attribute(object, name, context).type.get());
}

}  // namespace gpstream::hdf5
