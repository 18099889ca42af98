// What a gpstream file holds, as text (`gpstream info` prints it; Python's
// gpstream.info returns it): a dataset (shape, columns and their
// statistics, chunks, fingerprint), a model (dense or sparse: kernel,
// hyperparameters, training set, solver and its convergence), a checkpoint
// (the job, where it stands, its stopping rule) or a hyperparameter file.
#pragma once

#include "engine/core/human_readable.h"  // the units its text is in, for the front ends' own lines too
#include "storage/checkpoint/search_checkpoint.h"

#include <functional>
#include <string>

namespace gpstream {

// How a front end tells its user to continue the job saved at `path`: a
// training job's checkpoint (`search` null) or a hyperparameter search's.
// The command line names a command, Python a parameter.
using ResumeInstruction = std::function<std::string(const std::string& path, const SearchCheckpoint* search)>;

// Labelled lines, one per fact (a checkpoint's last says how to resume it,
// as `resume` phrases it); an Error naming the file for one that is not a
// gpstream file.
std::string describe_file(const std::string& path, const ResumeInstruction& resume);

}  // namespace gpstream
