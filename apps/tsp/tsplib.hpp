// TSPLIB instances (Reinelt, TSPLIB 95): the symmetric TSP files of data/tsplib/ and the common rest.
// Coordinates with EUC_2D, CEIL_2D, ATT and GEO distances, or EXPLICIT weights in FULL_MATRIX,
// UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW or LOWER_DIAG_ROW; rounded as TSPLIB 95 says.
//
//   tsp::Instance berlin = tsp::read_tsplib("data/tsplib/berlin52.tsp");
//   int d = berlin.distance(0, 1);
//
// A file it cannot read gives tsp::FormatError, one line naming the file, the line and the keyword:
// "eil51.tsp:5: EDGE_WEIGHT_TYPE: 'XRAY1' is not supported (EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT)".
#pragma once

#include <iosfwd>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tsp {

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Instance {
  std::string name, comment;
  int n = 0;                    // cities, at least 3
  std::vector<int> distances;   // n × n, row major, symmetric, zero diagonal
  int distance(int i, int j) const { return distances[static_cast<std::size_t>(i) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j)]; }
  // An instance of given distances (n × n, symmetric, zero diagonal; std::invalid_argument otherwise):
  // tests and generated benchmarks.
  static Instance from_matrix(std::string name, int n, std::vector<int> distances);
};

Instance read_tsplib(const std::string& path);  // a file it cannot open: FormatError "<path>: cannot open"
// `source` names the input in errors (a file name).
Instance parse_tsplib(std::istream& in, const std::string& source);

// The optimal tour lengths an OPTIMA.txt lists ("name length" lines, # comments), by instance name:
// the one beside `tsp_file`. Empty when there is none.
std::map<std::string, long> optima_beside(const std::string& tsp_file);

// TSPLIB 95's distance functions (section 2), for coordinates as the file gives them.
int euc_2d(double xi, double yi, double xj, double yj);   // nint(√(dx² + dy²))
int ceil_2d(double xi, double yi, double xj, double yj);  // ⌈√(dx² + dy²)⌉
int att(double xi, double yi, double xj, double yj);      // pseudo-Euclidean
int geo(double lat_i, double lon_i, double lat_j, double lon_j);  // DDD.MM degrees and minutes

}  // namespace tsp
