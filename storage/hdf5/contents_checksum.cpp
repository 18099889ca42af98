#include "storage/hdf5/contents_checksum.h"

#include "engine/core/error.h"
#include "storage/hdf5/hdf5_handle.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace gpstream::hdf5 {
namespace {

class Digest {
 public:
  Digest() : state_(XXH3_createState(), XXH3_freeState) {
    GPSTREAM_CHECK(state_ != nullptr, "out of memory for a checksum");
    XXH3_64bits_reset(state_.get());
  }
  void add(const void* data, std::size_t bytes) { XXH3_64bits_update(state_.get(), data, bytes); }
  void add(const std::string& text) { add(text.c_str(), text.size() + 1); }
  void add(std::uint64_t value) { add(&value, sizeof value); }
  std::string hex() const { return fmt::format("{:016x}", XXH3_64bits_digest(state_.get())); }

 private:
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state_;
};

// Names of an object's attributes, or of its links, in name order.
std::vector<std::string> attribute_names(hid_t object) {
  std::vector<std::string> names;
  H5Aiterate2(
      object, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->emplace_back(name);
        return 0;
      },
      &names);
  return names;
}

std::vector<std::string> link_names(hid_t group) {
  std::vector<std::string> names;
  H5Literate(
      group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->emplace_back(name);
        return 0;
      },
      &names);
  return names;
}

// A numeric type class read as which native type (whole numbers exactly, others as double).
hid_t native_type_of(H5T_class_t type_class) {
  return type_class == H5T_INTEGER ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
}

void add_attributes(Digest& digest, hid_t object, bool root, const std::string& context) {
  for (const std::string& name : attribute_names(object)) {
    if (root && name == kContentsChecksum) continue;
    digest.add(name);
    Handle attribute = check_handle(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose, context + ": " + name);
    Handle type = check_handle(H5Aget_type(attribute.get()), H5Tclose, context + ": " + name);
    const H5T_class_t type_class = H5Tget_class(type.get());
    digest.add(static_cast<std::uint64_t>(type_class));
    if (type_class == H5T_STRING) {
      for (const std::string& text : read_string_array_attribute(object, name, context)) digest.add(text);
      continue;
    }
    GPSTREAM_CHECK(type_class == H5T_INTEGER || type_class == H5T_FLOAT,
                   "{}: attribute '{}' holds neither text nor numbers", context, name);
    Handle space = check_handle(H5Aget_space(attribute.get()), H5Sclose, context + ": " + name);
    const hssize_t elements = H5Sget_simple_extent_npoints(space.get());
    GPSTREAM_CHECK(elements >= 0, "{}: attribute '{}' has an unreadable shape", context, name);
    std::vector<std::uint64_t> values(static_cast<std::size_t>(elements));  // 8 bytes each, whichever native type
    digest.add(values.size());
    if (values.empty()) continue;
    check_status(H5Aread(attribute.get(), native_type_of(type_class), values.data()), context + ": attribute " + name);
    digest.add(values.data(), values.size() * sizeof(std::uint64_t));
  }
}

// A dataset's values, read a slab of rows at a time (its first dimension), so
// that an O(n) vector is not held twice.
void add_dataset(Digest& digest, hid_t dataset, const std::string& context) {
  Handle type = check_handle(H5Dget_type(dataset), H5Tclose, context);
  const H5T_class_t type_class = H5Tget_class(type.get());
  GPSTREAM_CHECK(type_class == H5T_INTEGER || type_class == H5T_FLOAT, "{} holds neither numbers", context);
  const std::vector<hsize_t> dimensions = dataset_dimensions(dataset, context);
  for (const hsize_t extent : dimensions) digest.add(static_cast<std::uint64_t>(extent));
  if (dimensions.empty()) return;
  hsize_t row_elements = 1;
  for (std::size_t k = 1; k < dimensions.size(); ++k) row_elements *= dimensions[k];
  if (dimensions[0] == 0 || row_elements == 0) return;
  const hsize_t rows_per_slab = std::max<hsize_t>(1, (hsize_t{1} << 20) / row_elements);
  Handle file_space = check_handle(H5Dget_space(dataset), H5Sclose, context);
  std::vector<std::uint64_t> values;
  for (hsize_t first = 0; first < dimensions[0]; first += rows_per_slab) {
    std::vector<hsize_t> start(dimensions.size(), 0), count = dimensions;
    start[0] = first;
    count[0] = std::min(rows_per_slab, dimensions[0] - first);
    check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
                 context);
    const hsize_t elements = count[0] * row_elements;
    Handle memory_space = check_handle(H5Screate_simple(1, &elements, nullptr), H5Sclose, context);
    values.resize(elements);
    check_status(
        H5Dread(dataset, native_type_of(type_class), memory_space.get(), file_space.get(), H5P_DEFAULT, values.data()),
        context);
    digest.add(values.data(), values.size() * sizeof(std::uint64_t));
  }
}

void add_group(Digest& digest, hid_t group, bool root, const std::string& context) {
  add_attributes(digest, group, root, context);
  for (const std::string& name : link_names(group)) {
    digest.add(name);
    const std::string where = context + ": " + name;
    Handle object = check_handle(H5Oopen(group, name.c_str(), H5P_DEFAULT), H5Oclose, where);
    const H5I_type_t kind = H5Iget_type(object.get());
    digest.add(static_cast<std::uint64_t>(kind));
    if (kind == H5I_GROUP) {
      add_group(digest, object.get(), false, where);
    } else if (kind == H5I_DATASET) {
      add_attributes(digest, object.get(), false, where);
      add_dataset(digest, object.get(), where);
    }
  }
}

}  // namespace

std::string contents_checksum(hid_t root, const std::string& context) {
  Digest digest;
  add_group(digest, root, true, context);
  return digest.hex();
}

void check_contents_checksum(hid_t root, const std::string& path, const std::string& what, const std::string& advice) {
  GPSTREAM_CHECK(has_attribute(root, kContentsChecksum),
                 "{}: the {} has no checksum of its contents (attribute '{}' removed?): it cannot be trusted{}", path,
                 what, kContentsChecksum, advice);
  GPSTREAM_CHECK(read_string_attribute(root, kContentsChecksum, path) == contents_checksum(root, path),
                 "{}: the {}'s contents do not match their checksum: it was changed or damaged after it was written{}",
                 path, what, advice);
}

}  // namespace gpstream::hdf5
