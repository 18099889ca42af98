// DenseModel: the product of training an exact GP — weights α = K̄⁻¹y over
// the training rows, with everything needed to predict from them.
#pragma once

#include "engine/prediction/model_description.h"

#include <vector>

namespace gpstream {

// The training rows are referenced (dataset_path), not copied:
// prediction streams them.
struct DenseModel : ModelDescription {
  std::vector<double> alpha;  // n weights (standardised units)
};

}  // namespace gpstream
