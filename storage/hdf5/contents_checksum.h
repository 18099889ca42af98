// The checksum of everything a gpstream file holds, so that a model or a
// checkpoint is checked against what it claims to be when it is read: a
// flipped byte of α, an edited noise variance or lengthscale, a removed
// attribute — any change after the file was written — is refused instead of
// predicting or resuming from something else.
//
// XXH3 over every attribute and every dataset of every group, visited in
// name order (attributes of an object before its links), each value as
// read in its native type; the root's 'contents_checksum' attribute, which
// stores it, is left out. hdf5::write_file (hdf5_handle.h) writes it into
// every file it makes; readers require it from the format version on which
// their files carry it.
#pragma once

#include <hdf5.h>

#include <string>

namespace gpstream::hdf5 {

inline constexpr const char* kContentsChecksum = "contents_checksum";

std::string contents_checksum(hid_t root, const std::string& context);
// Throws, naming `path` and `what` ("model file") and ending with `advice`
// ("; resume from another checkpoint"), unless the root's stored checksum is
// there and equals the contents'.
void check_contents_checksum(hid_t root, const std::string& path, const std::string& what,
                             const std::string& advice = "");

}  // namespace gpstream::hdf5
