// What a gpstream file holds, as text (`gpstream info` prints it; Python's
// gpstream.info returns it): a dataset (shape, columns and their
// statistics, chunks, fingerprint), a model (dense or sparse: kernel,
// hyperparameters, training set, solver and its convergence), a checkpoint
// (the job, where it stands, its stopping rule) or a hyperparameter file.
#pragma once

#include "storage/checkpoint/search_checkpoint.h"

#include <string>

namespace gpstream {

// Labelled lines, one per fact; an Error naming the file for one that is not a gpstream file.
std::string describe_file(const std::string& path);

// The command that continues the hyperparameter search saved at `path`: a
// training job resumes from it (gpstream train --resume), hyper's search is
// the same command run again.
std::string search_resume_command(const SearchCheckpoint& search, const std::string& path);

}  // namespace gpstream
