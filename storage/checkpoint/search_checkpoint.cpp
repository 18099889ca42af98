#include "storage/checkpoint/search_checkpoint.h"

#include "engine/core/error.h"
#include "storage/hdf5/hdf5_handle.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <filesystem>
#include <span>

namespace gpstream {
namespace {

constexpr std::int64_t kVersion = 2;

struct Flattened {
  std::vector<double> points, values, gradients, point_sizes, gradient_sizes, covariances, covariance_sizes, warm_start;
};

Flattened flatten(const std::vector<SearchJournal::Entry>& entries, const std::vector<double>& warm_start) {
  Flattened flat;
  flat.warm_start = warm_start;
  for (const SearchJournal::Entry& entry : entries) {
    flat.points.insert(flat.points.end(), entry.point.begin(), entry.point.end());
    flat.values.push_back(entry.value);
    flat.gradients.insert(flat.gradients.end(), entry.gradient.begin(), entry.gradient.end());
    flat.point_sizes.push_back(static_cast<double>(entry.point.size()));
    flat.gradient_sizes.push_back(static_cast<double>(entry.gradient.size()));
    flat.covariances.insert(flat.covariances.end(), entry.covariance.begin(), entry.covariance.end());
    flat.covariance_sizes.push_back(static_cast<double>(entry.covariance.size()));
  }
  return flat;
}

// Version 1 files hash the first five parts only.
std::string checksum(const Flattened& flat, const SearchCheckpoint& checkpoint, std::int64_t version) {
  XXH3_state_t* hash = XXH3_createState();
  GPSTREAM_CHECK(hash != nullptr, "out of memory for a checksum");
  XXH3_64bits_reset(hash);
  const std::vector<double>* parts[] = {&flat.points,           &flat.values,         &flat.gradients,
                                        &flat.point_sizes,      &flat.gradient_sizes, &flat.covariances,
                                        &flat.covariance_sizes, &flat.warm_start};
  for (const std::vector<double>* part : std::span(parts, version >= 2 ? 8 : 5)) {
    const std::uint64_t size = part->size();
    XXH3_64bits_update(hash, &size, sizeof size);
    XXH3_64bits_update(hash, part->data(), part->size() * sizeof(double));
  }
  for (const std::string& argument : checkpoint.arguments)
    XXH3_64bits_update(hash, argument.c_str(), argument.size() + 1);
  XXH3_64bits_update(hash, checkpoint.dataset_fingerprint.c_str(), checkpoint.dataset_fingerprint.size() + 1);
  const std::uint64_t digest = XXH3_64bits_digest(hash);
  XXH3_freeState(hash);
  return fmt::format("{:016x}", digest);
}

}  // namespace

void write_search_checkpoint(const std::string& path, const SearchCheckpoint& checkpoint) {
  const Flattened flat = flatten(checkpoint.entries, checkpoint.warm_start);
  hdf5::write_file(path, ExistingOutput::replace, "search checkpoint", [&](hid_t root) {
    hdf5::write_attribute(root, "format", std::string(kSearchCheckpointFormat));
    hdf5::write_attribute(root, "version", kVersion);
    hdf5::write_creation_attributes(root);
    hdf5::write_attribute(root, "command", checkpoint.command);
    hdf5::write_attribute(root, "arguments", checkpoint.arguments);
    hdf5::write_attribute(root, "dataset_fingerprint", checkpoint.dataset_fingerprint);
    hdf5::write_attribute(root, "evaluations", static_cast<std::int64_t>(checkpoint.entries.size()));
    hdf5::write_attribute(root, "checksum", checksum(flat, checkpoint, kVersion));
    hdf5::write_vector(root, "points", flat.points);
    hdf5::write_vector(root, "values", flat.values);
    hdf5::write_vector(root, "gradients", flat.gradients);
    hdf5::write_vector(root, "point_sizes", flat.point_sizes);
    hdf5::write_vector(root, "gradient_sizes", flat.gradient_sizes);
    hdf5::write_vector(root, "covariances", flat.covariances);
    hdf5::write_vector(root, "covariance_sizes", flat.covariance_sizes);
    hdf5::write_vector(root, "warm_start", flat.warm_start);
  });
}

SearchCheckpoint read_search_checkpoint(const std::string& path) {
  hdf5::Handle file = hdf5::open_file(path);
  const hid_t root = file.get();
  const std::int64_t version = hdf5::check_format(root, path, kSearchCheckpointFormat, kVersion);
  SearchCheckpoint checkpoint;
  checkpoint.command = hdf5::read_string_attribute(root, "command", path);
  checkpoint.arguments = hdf5::read_string_array_attribute(root, "arguments", path);
  checkpoint.dataset_fingerprint = hdf5::read_string_attribute(root, "dataset_fingerprint", path);
  Flattened flat;
  flat.values = hdf5::read_vector(root, "values", path);
  flat.point_sizes = hdf5::read_vector(root, "point_sizes", path, flat.values.size());
  flat.gradient_sizes = hdf5::read_vector(root, "gradient_sizes", path, flat.values.size());
  flat.points = hdf5::read_vector(root, "points", path);
  flat.gradients = hdf5::read_vector(root, "gradients", path);
  if (version >= 2) {
    flat.covariance_sizes = hdf5::read_vector(root, "covariance_sizes", path, flat.values.size());
    flat.covariances = hdf5::read_vector(root, "covariances", path);
    flat.warm_start = hdf5::read_vector(root, "warm_start", path);
  } else {
    flat.covariance_sizes.assign(flat.values.size(), 0.0);
  }
  GPSTREAM_CHECK(hdf5::read_string_attribute(root, "checksum", path) == checksum(flat, checkpoint, version),
                 "{}: the search checkpoint's contents do not match its checksum: it was changed or damaged after it "
                 "was written; delete it to start the search again",
                 path);
  checkpoint.warm_start = flat.warm_start;
  std::size_t point = 0, gradient = 0, covariance = 0;
  for (std::size_t k = 0; k < flat.values.size(); ++k) {
    const auto size = [&](double value, std::size_t at, std::size_t available) {
      GPSTREAM_CHECK(
          value >= 0 && value == std::floor(value) && static_cast<double>(at) + value <= static_cast<double>(available),
          "{}: entry {} has an invalid size {}", path, k + 1, value);
      return static_cast<std::size_t>(value);
    };
    const std::size_t p = size(flat.point_sizes[k], point, flat.points.size());
    const std::size_t g = size(flat.gradient_sizes[k], gradient, flat.gradients.size());
    const std::size_t c = size(flat.covariance_sizes[k], covariance, flat.covariances.size());
    SearchJournal::Entry entry;
    entry.point.assign(flat.points.begin() + static_cast<std::ptrdiff_t>(point),
                       flat.points.begin() + static_cast<std::ptrdiff_t>(point + p));
    entry.value = flat.values[k];
    entry.gradient.assign(flat.gradients.begin() + static_cast<std::ptrdiff_t>(gradient),
                          flat.gradients.begin() + static_cast<std::ptrdiff_t>(gradient + g));
    entry.covariance.assign(flat.covariances.begin() + static_cast<std::ptrdiff_t>(covariance),
                            flat.covariances.begin() + static_cast<std::ptrdiff_t>(covariance + c));
    checkpoint.entries.push_back(std::move(entry));
    point += p;
    gradient += g;
    covariance += c;
  }
  return checkpoint;
}

bool is_search_checkpoint(const std::string& path) { return hdf5::has_format(path, kSearchCheckpointFormat); }

}  // namespace gpstream
