// The TSPLIB reader: every instance of data/tsplib, distances checked by hand per format, and bad input.
#include "tsplib.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kDir = DPS_TSPLIB_DIR;

tsp::Instance parse(const std::string& text) {
  std::istringstream in(text);
  return tsp::parse_tsplib(in, "inline.tsp");
}

int tour_length(const tsp::Instance& instance, const std::vector<int>& tour) {
  int length = 0;
  for (std::size_t k = 0; k < tour.size(); ++k) length += instance.distance(tour[k], tour[(k + 1) % tour.size()]);
  return length;
}

std::vector<int> identity_tour(int n) {
  std::vector<int> tour(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) tour[static_cast<std::size_t>(i)] = i;
  return tour;
}

// Held–Karp dynamic programming: the optimum of a small instance, independent of any solver.
int dp_optimum(const tsp::Instance& instance) {
  const int m = instance.n - 1;  // city m is the start
  const std::size_t subsets = std::size_t{1} << m;
  constexpr int kInfinite = std::numeric_limits<int>::max() / 2;
  std::vector<int> best(subsets * static_cast<std::size_t>(m), kInfinite);  // [visited set][last city]
  const auto at = [&](std::size_t set, int last) -> int& {
    return best[set * static_cast<std::size_t>(m) + static_cast<std::size_t>(last)];
  };
  for (int j = 0; j < m; ++j) at(std::size_t{1} << j, j) = instance.distance(m, j);
  for (std::size_t set = 1; set < subsets; ++set)
    for (int j = 0; j < m; ++j) {
      if (at(set, j) == kInfinite) continue;
      for (int k = 0; k < m; ++k)
        if (!(set >> k & 1)) {
          int& next = at(set | std::size_t{1} << k, k);
          next = std::min(next, at(set, j) + instance.distance(j, k));
        }
    }
  int optimum = kInfinite;
  for (int j = 0; j < m; ++j) optimum = std::min(optimum, at(subsets - 1, j) + instance.distance(j, m));
  return optimum;
}

// The error of parsing `text`, which must be one line beginning with `prefix`.
void expect_error(const std::string& text, const std::string& prefix) {
  try {
    parse(text);
    ADD_FAILURE() << "no error for:\n" << text << "\nexpected: " << prefix;
  } catch (const tsp::FormatError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.starts_with(prefix)) << "got:      " << what << "\nexpected: " << prefix << "...";
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(Tsplib, EveryInstanceLoadsSymmetricWithItsDimension) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    if (entry.path().extension() != ".tsp") continue;
    ++files;
    SCOPED_TRACE(entry.path().filename().string());
    // DIMENSION read here independently of the reader.
    std::ifstream file(entry.path());
    int dimension = 0;
    for (std::string line; std::getline(file, line);)
      if (line.starts_with("DIMENSION")) dimension = std::stoi(line.substr(line.find(':') + 1));
    const tsp::Instance instance = tsp::read_tsplib(entry.path().string());
    EXPECT_EQ(instance.name, entry.path().stem().string());
    ASSERT_EQ(instance.n, dimension);
    ASSERT_EQ(instance.distances.size(), static_cast<std::size_t>(dimension * dimension));
    for (int i = 0; i < instance.n; ++i) {
      EXPECT_EQ(instance.distance(i, i), 0);
      for (int j = 0; j < i; ++j) {
        EXPECT_EQ(instance.distance(i, j), instance.distance(j, i)) << i << " " << j;
        EXPECT_GT(instance.distance(i, j), 0) << i << " " << j;  // no two cities of these files coincide
      }
    }
  }
  EXPECT_EQ(files, 10);
}

TEST(Tsplib, Euc2dBerlin52) {
  const tsp::Instance berlin = tsp::read_tsplib(kDir + "/berlin52.tsp");
  EXPECT_EQ(berlin.comment, "52 locations in Berlin (Groetschel)");
  // Cities 1 (565, 575) and 2 (25, 185): √(540² + 390²) = √443700 = 666.11 → 666.
  EXPECT_EQ(berlin.distance(0, 1), 666);
  // Cities 3 (345, 750) and 4 (945, 685): √(600² + 65²) = √364225 = 603.51 → 604 (rounded up).
  EXPECT_EQ(berlin.distance(2, 3), 604);
  EXPECT_EQ(berlin.distance(3, 2), 604);
}

TEST(Tsplib, AttAtt48) {
  const tsp::Instance att48 = tsp::read_tsplib(kDir + "/att48.tsp");
  // Cities 1 (6734, 1453) and 2 (2233, 10): r = √((4501² + 1443²) / 10) = √2234125 = 1494.70, nint 1495 ≥ r: 1495.
  EXPECT_EQ(att48.distance(0, 1), 1495);
  // Cities 1 and 5 (3082, 1644): r = √((3652² + 191²) / 10) = √1337358.5 = 1156.44, nint 1156 < r: 1157.
  EXPECT_EQ(att48.distance(0, 4), 1157);
  // Cities 1 and 4 (401, 841): r = √4048143.3 = 2011.9998, nint 2012 ≥ r: 2012.
  EXPECT_EQ(att48.distance(0, 3), 2012);
}

TEST(Tsplib, GeoBurma14) {
  const tsp::Instance burma = tsp::read_tsplib(kDir + "/burma14.tsp");
  // Cities 1 (16.47, 96.10) and 2 (16.47, 94.44): latitudes 16° 47' = 0.292924 rad both, longitudes
  // 96° 10' = 1.678425 and 94° 44' = 1.653408 rad; q1 = 0.99968711, q2 = 1, q3 = 0.83324312;
  // acos(0.99971320) = 0.02395072; 6378.388 × 0.02395072 + 1 = 153.77 → 153.
  EXPECT_EQ(burma.distance(0, 1), 153);
  // Cities 1 and 3 (20.09, 92.54): 6378.388 × acos(0.99681373) + 1 = 510.31 → 510.
  EXPECT_EQ(burma.distance(0, 2), 510);
}

TEST(Tsplib, Ceil2dInline) {
  const tsp::Instance instance = parse(
      "NAME : ceil4\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : CEIL_2D\nNODE_COORD_SECTION\n"
      "1 0 0\n2 3 4\n3 1 1\n4 0 2.2\nEOF\n");
  EXPECT_EQ(instance.distance(0, 1), 5);  // exactly 5: not rounded up further
  EXPECT_EQ(instance.distance(0, 2), 2);  // √2 = 1.41 → 2 (EUC_2D would give 1)
  EXPECT_EQ(instance.distance(0, 3), 3);  // 2.2 → 3 (EUC_2D would give 2)
  EXPECT_EQ(instance.distance(1, 2), 4);  // √13 = 3.61 → 4
  EXPECT_EQ(instance.distance(1, 3), 4);  // √(9 + 3.24) = 3.50 → 4
  EXPECT_EQ(instance.distance(2, 3), 2);  // √(1 + 1.44) = 1.56 → 2
}

TEST(Tsplib, LowerDiagRowGr17) {
  const tsp::Instance gr17 = tsp::read_tsplib(kDir + "/gr17.tsp");
  // The section begins "0 / 633 0 / 257 390 0 / 91 661 228 0": rows of the lower triangle, diagonal included.
  EXPECT_EQ(gr17.distance(0, 1), 633);
  EXPECT_EQ(gr17.distance(0, 2), 257);
  EXPECT_EQ(gr17.distance(1, 2), 390);
  EXPECT_EQ(gr17.distance(0, 3), 91);
  EXPECT_EQ(gr17.distance(1, 3), 661);
  EXPECT_EQ(gr17.distance(3, 2), 228);
  // The last row: "121 518 ... 153 336 0".
  EXPECT_EQ(gr17.distance(16, 0), 121);
  EXPECT_EQ(gr17.distance(16, 14), 153);
  EXPECT_EQ(gr17.distance(15, 16), 336);
}

TEST(Tsplib, UpperRowBayg29) {
  const tsp::Instance bayg29 = tsp::read_tsplib(kDir + "/bayg29.tsp");
  // Row 1 is the section's first line, 28 numbers "97 205 139 ... 34 145"; row 2 begins "129".
  EXPECT_EQ(bayg29.distance(0, 1), 97);
  EXPECT_EQ(bayg29.distance(0, 2), 205);
  EXPECT_EQ(bayg29.distance(28, 0), 145);
  EXPECT_EQ(bayg29.distance(1, 2), 129);
}

// One 4-city matrix in three formats: d(1,2) = 3, d(1,3) = 5, d(1,4) = 7, d(2,3) = 11, d(2,4) = 13, d(3,4) = 17.
void expect_matrix(const tsp::Instance& instance) {
  const std::vector<int> expected = {0, 3, 5, 7, 3, 0, 11, 13, 5, 11, 0, 17, 7, 13, 17, 0};
  ASSERT_EQ(instance.n, 4);
  EXPECT_EQ(instance.distances, expected);
}

std::string explicit_instance(const std::string& format, const std::string& weights) {
  return "NAME: m4\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: " + format +
         "\nEDGE_WEIGHT_SECTION\n" + weights + "EOF\n";
}

TEST(Tsplib, FullMatrixInline) {
  // Lines broken anywhere: the weights are a stream of numbers.
  expect_matrix(parse(explicit_instance("FULL_MATRIX", "0 3 5\n7 3 0 11 13 5\n11\n0 17 7 13 17 0\n")));
}

TEST(Tsplib, UpperDiagRowInline) {
  expect_matrix(parse(explicit_instance("UPPER_DIAG_ROW", "0 3 5 7\n0 11 13\n0 17\n0\n")));
}

TEST(Tsplib, LowerRowInline) { expect_matrix(parse(explicit_instance("LOWER_ROW", "3\n5 11\n7 13 17\n"))); }

TEST(Tsplib, UpperRowAndLowerDiagRowInline) {
  expect_matrix(parse(explicit_instance("UPPER_ROW", "3 5 7 11 13 17\n")));
  expect_matrix(parse(explicit_instance("LOWER_DIAG_ROW", "0 3 0 5 11 0 7 13 17 0\n")));
}

TEST(Tsplib, DiagonalOfTheFileIsIgnored) {
  // Some files put a large number on the diagonal; a tour never uses it.
  expect_matrix(parse(explicit_instance("UPPER_DIAG_ROW", "9999 3 5 7\n9999 11 13\n9999 17\n9999\n")));
}

TEST(Tsplib, LaxLayout) {
  // No spaces around ':', blank lines, CRLF, COMMENT twice, display data, no EOF line.
  const tsp::Instance instance = parse(
      "\r\nNAME:lax\r\nCOMMENT: one\r\nCOMMENT :two\r\n\r\nTYPE:TSP\r\nDIMENSION:3\r\nEDGE_WEIGHT_TYPE : EXPLICIT\r\n"
      "EDGE_WEIGHT_FORMAT:  UPPER_ROW  \r\nNODE_COORD_TYPE : NO_COORDS\r\nDISPLAY_DATA_TYPE: TWOD_DISPLAY\r\n"
      "EDGE_WEIGHT_SECTION\r\n\r\n 4  6\r\n\r\n 5\r\nDISPLAY_DATA_SECTION\r\n1 0 0\r\n2 1 1\r\n3 2 2\r\n");
  EXPECT_EQ(instance.name, "lax");
  EXPECT_EQ(instance.comment, "one two");
  ASSERT_EQ(instance.n, 3);
  EXPECT_EQ(instance.distance(0, 1), 4);
  EXPECT_EQ(instance.distance(0, 2), 6);
  EXPECT_EQ(instance.distance(2, 1), 5);
}

TEST(Tsplib, DistanceFunctions) {
  EXPECT_EQ(tsp::euc_2d(0, 0, 3, 4), 5);
  EXPECT_EQ(tsp::euc_2d(0, 0, 0, 2.5), 3);  // nint rounds halves up
  EXPECT_EQ(tsp::euc_2d(0, 0, 0, 2.49), 2);
  EXPECT_EQ(tsp::ceil_2d(0, 0, 0, 2.01), 3);
  EXPECT_EQ(tsp::att(6734, 1453, 3082, 1644), 1157);
  EXPECT_EQ(tsp::geo(16.47, 96.10, 16.47, 94.44), 153);
  EXPECT_EQ(tsp::geo(16.47, 94.44, 16.47, 96.10), 153);
  // Along the equator the formula is R × Δlongitude: 50° 29' = 50.48333° = 0.8811002 rad with TSPLIB's
  // PI = 3.141592, × 6378.388 + 1 = 5620.9989 → 5620 (with π itself: 5621.0001 → 5621).
  EXPECT_EQ(tsp::geo(0, 0, 0, 50.29), 5620);
  EXPECT_EQ(tsp::geo(16.47, 96.10, 16.47, 96.10), 1);  // the formula adds 1: the reader keeps the diagonal 0
}

// Cities 1, 2, ..., n in the files' order. att48: 49840, computed twice independently (Python, awk)
// with TSPLIB's ATT formula; the 33523 once expected here is not this tour's length under ATT.
// berlin52: 22205 (Python, awk).
TEST(Tsplib, IdentityTourLengths) {
  const tsp::Instance att48 = tsp::read_tsplib(kDir + "/att48.tsp");
  EXPECT_EQ(tour_length(att48, identity_tour(att48.n)), 49840);
  const tsp::Instance berlin52 = tsp::read_tsplib(kDir + "/berlin52.tsp");
  EXPECT_EQ(tour_length(berlin52, identity_tour(berlin52.n)), 22205);
}

// The optima of OPTIMA.txt, by exhaustive dynamic programming: burma14's needs GEO's truncated degrees.
TEST(Tsplib, SmallOptimaMatchTsplib) {
  EXPECT_EQ(dp_optimum(tsp::read_tsplib(kDir + "/burma14.tsp")), 3323);
  EXPECT_EQ(dp_optimum(tsp::read_tsplib(kDir + "/gr17.tsp")), 2085);
}

TEST(Tsplib, FromMatrix) {
  const tsp::Instance instance = tsp::Instance::from_matrix("m3", 3, {0, 1, 2, 1, 0, 3, 2, 3, 0});
  EXPECT_EQ(instance.name, "m3");
  EXPECT_EQ(instance.n, 3);
  EXPECT_EQ(instance.distance(2, 1), 3);
  EXPECT_THROW(tsp::Instance::from_matrix("small", 2, {0, 1, 1, 0}), std::invalid_argument);
  EXPECT_THROW(tsp::Instance::from_matrix("size", 3, {0, 1, 2, 1, 0, 3, 2, 3}), std::invalid_argument);
  EXPECT_THROW(tsp::Instance::from_matrix("asymmetric", 3, {0, 1, 2, 1, 0, 3, 2, 4, 0}), std::invalid_argument);
  EXPECT_THROW(tsp::Instance::from_matrix("diagonal", 3, {0, 1, 2, 1, 5, 3, 2, 3, 0}), std::invalid_argument);
}

TEST(Tsplib, FileErrorsNameTheFile) {
  try {
    tsp::read_tsplib("/nonexistent/none.tsp");
    ADD_FAILURE() << "no error";
  } catch (const tsp::FormatError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/none.tsp: cannot open");
  }
  const std::string path = ::testing::TempDir() + "/two-cities.tsp";
  std::ofstream(path) << "NAME: two\nDIMENSION: 2\n";
  try {
    tsp::read_tsplib(path);
    ADD_FAILURE() << "no error";
  } catch (const tsp::FormatError& e) {
    EXPECT_STREQ(e.what(), "two-cities.tsp:2: DIMENSION: fewer than 3 cities (2)");  // the file name only
  }
  std::filesystem::remove(path);
}

TEST(Tsplib, SpecificationErrors) {
  expect_error("NAME: a\nTYPE: TSP\nDIMENSION : 2\n", "inline.tsp:3: DIMENSION: fewer than 3 cities");
  expect_error("DIMENSION: three\n", "inline.tsp:1: DIMENSION: 'three' is not a number");
  expect_error("DIMENSION: 5\nDIMENSION: 5\n", "inline.tsp:2: DIMENSION: given twice");
  expect_error("DIMENSION: 100000\n", "inline.tsp:1: DIMENSION: more than 10000 cities");
  for (const char* type : {"XRAY1", "MAN_2D", "MAX_2D", "EUC_3D", "SPECIAL"})
    expect_error(std::string("DIMENSION: 5\nEDGE_WEIGHT_TYPE : ") + type,
                 std::string("inline.tsp:2: EDGE_WEIGHT_TYPE: '") + type +
                     "' is not supported (EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT)");
  for (const char* type : {"ATSP", "HCP", "CVRP", "TOUR"})
    expect_error(std::string("NAME: a\nTYPE : ") + type,
                 std::string("inline.tsp:2: TYPE: '") + type + "' is not supported");
  for (const char* format : {"UPPER_COL", "LOWER_COL", "UPPER_DIAG_COL", "LOWER_DIAG_COL", "WEIRD"})
    expect_error(std::string("EDGE_WEIGHT_FORMAT: ") + format,
                 std::string("inline.tsp:1: EDGE_WEIGHT_FORMAT: '") + format + "' is not supported (FUNCTION, ");
  expect_error("NODE_COORD_TYPE : THREED_COORDS", "inline.tsp:1: NODE_COORD_TYPE: 'THREED_COORDS' is not supported");
  expect_error("NAME: a\nCAPACITY : 5\n", "inline.tsp:2: CAPACITY: unknown keyword");
  expect_error("NAME: a\nDEMAND_SECTION\n", "inline.tsp:2: DEMAND_SECTION: unknown keyword");
  expect_error("DIMENSION: 3\nFIXED_EDGES_SECTION\n1 2\n-1\n",
               "inline.tsp:2: FIXED_EDGES_SECTION: fixed edges are not supported");
  // Values are quoted cut short.
  expect_error("TYPE: " + std::string(500, 'X'), "inline.tsp:1: TYPE: '" + std::string(40, 'X') + "...' is not");
}

const std::string kEuc3 =
    "NAME: e3\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n";  // lines 1–5

TEST(Tsplib, NodeCoordErrors) {
  expect_error("NAME: a\nNODE_COORD_SECTION\n1 0 0\n",
               "inline.tsp:2: NODE_COORD_SECTION: no DIMENSION before the section");
  // The data disagrees with DIMENSION: at EOF, or at the end of the stream.
  expect_error(kEuc3 + "1 0 0\n2 1 1\nEOF\n", "inline.tsp:8: DIMENSION: 3 but NODE_COORD_SECTION has 2 cities");
  expect_error(kEuc3 + "1 0 0\n2 1 1\n", "inline.tsp:7: DIMENSION: 3 but NODE_COORD_SECTION has 2 cities");
  expect_error(kEuc3 + "1 0 0\n0 1 1\n", "inline.tsp:7: NODE_COORD_SECTION: city '0' is not in 1..3");
  expect_error(kEuc3 + "4 0 0\n", "inline.tsp:6: NODE_COORD_SECTION: city '4' is not in 1..3");
  expect_error(kEuc3 + "1.5 0 0\n", "inline.tsp:6: NODE_COORD_SECTION: city '1.5' is not in 1..3");
  expect_error(kEuc3 + "1 0 0\n2 1 1\n1 2 2\n", "inline.tsp:8: NODE_COORD_SECTION: city 1 again (line 6)");
  expect_error(kEuc3 + "1 0 0\n2 1\n", "inline.tsp:7: NODE_COORD_SECTION: expected 'index x y', got '2 1'");
  expect_error(kEuc3 + "1 0 0 7\n", "inline.tsp:6: NODE_COORD_SECTION: expected 'index x y'");
  expect_error(kEuc3 + "1 0 x\n", "inline.tsp:6: NODE_COORD_SECTION: 'x' is not a coordinate");
  expect_error(kEuc3 + "1 0 nan\n", "inline.tsp:6: NODE_COORD_SECTION: 'nan' is not a coordinate");
  expect_error(kEuc3 + "1 1e300 0\n", "inline.tsp:6: NODE_COORD_SECTION: '1e300' is not a coordinate");
}

const std::string kUpper4 =
    "NAME: u4\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\n";

TEST(Tsplib, EdgeWeightErrors) {
  const std::string section = kUpper4 + "EDGE_WEIGHT_SECTION\n";  // lines 1–6
  expect_error(section + "1 2 3\n4 5\nEOF\n",
               "inline.tsp:9: EDGE_WEIGHT_SECTION: DIMENSION 4 needs 6 weights, the section has 5");
  expect_error(section + "1 2 3\n4 5\n",
               "inline.tsp:8: EDGE_WEIGHT_SECTION: DIMENSION 4 needs 6 weights, the section has 5");
  expect_error(section + "1 2 3\n4 5\nDISPLAY_DATA_SECTION\n",
               "inline.tsp:9: EDGE_WEIGHT_SECTION: DIMENSION 4 needs 6 weights, the section has 5");
  expect_error(section + "1 2 3\n4 5 6 7\n",
               "inline.tsp:8: EDGE_WEIGHT_SECTION: DIMENSION 4 needs 6 weights, the section has more");
  expect_error(section + "1 2 3\n4 5.5 6\n", "inline.tsp:8: EDGE_WEIGHT_SECTION: '5.5' is not an integer");
  expect_error(section + "1 2 3\n4 5 6x\n", "inline.tsp:8: EDGE_WEIGHT_SECTION: '6x' is not an integer");
  expect_error(section + "1 -2 3\n4 5 6\n", "inline.tsp:7: EDGE_WEIGHT_SECTION: weight -2 is negative");
  expect_error("NAME: a\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_SECTION\n1 2 3\n",
               "inline.tsp:4: EDGE_WEIGHT_FORMAT: missing");
  expect_error("DIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: FUNCTION\nEDGE_WEIGHT_SECTION\n1 2 3\n",
               "inline.tsp:4: EDGE_WEIGHT_FORMAT: missing");
  expect_error("DIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nEDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n1 2 3\n",
               "inline.tsp:4: EDGE_WEIGHT_SECTION: EDGE_WEIGHT_TYPE must be EXPLICIT");
  // FULL_MATRIX: row 3, column 2 says 12 where row 2, column 3 said 11.
  expect_error(explicit_instance("FULL_MATRIX", "0 3 5 7\n3 0 11 13\n5 12 0 17\n7 13 17 0\n"),
               "inline.tsp:9: EDGE_WEIGHT_SECTION: not symmetric: cities 2 and 3");
}

TEST(Tsplib, MissingData) {
  expect_error("NAME: a\nTYPE: TSP\nEOF\n", "inline.tsp:3: DIMENSION: missing");
  expect_error("", "inline.tsp:1: DIMENSION: missing");
  expect_error("DIMENSION: 3\nEOF\n", "inline.tsp:2: EDGE_WEIGHT_TYPE: missing");
  expect_error("DIMENSION: 3\nEDGE_WEIGHT_TYPE: GEO\nEOF\n",
               "inline.tsp:3: NODE_COORD_SECTION: missing: the file gives no distances");
  expect_error(kUpper4 + "EOF\n", "inline.tsp:6: EDGE_WEIGHT_SECTION: missing: the file gives no distances");
  expect_error(kUpper4 + "NODE_COORD_SECTION\n1 0 0\n2 0 1\n3 1 0\n4 1 1\nEOF\n",
               "inline.tsp:11: EDGE_WEIGHT_SECTION: missing: EDGE_WEIGHT_TYPE is EXPLICIT");
  // Lines after EOF are not read.
  EXPECT_EQ(parse(kEuc3 + "1 0 0\n2 3 4\n3 6 8\nEOF\nGARBAGE\n").distance(0, 2), 10);
}

}  // namespace
