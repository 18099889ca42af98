// A test problem's rows as the API's arrays (storage/dataset/training_rows.h), for the api/ suites.
#pragma once

#include "engine/problems.h"
#include "storage/dataset/training_rows.h"

namespace gpstream::testing {

inline DatasetArrays arrays_of(const Problem& problem) {
  return {.x = problem.x.data(),
          .y = problem.y.data(),
          .rows = problem.rows(),
          .columns = problem.d,
          .feature_names = {},
          .target_name = "y"};
}

}  // namespace gpstream::testing
