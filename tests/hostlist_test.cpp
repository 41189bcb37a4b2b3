// Slurm's host lists and per-host counts: expressions from Slurm's documentation and man pages, the
// order and zero padding Slurm's own scontrol show hostnames gives, and each malformed case.
#include <dps/cluster/hostlist.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace dps::cluster {
namespace {

using Names = std::vector<std::string>;

// The message of the std::invalid_argument that `f` throws, or "" when it throws none.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string hostlist_error(std::string_view expression) {
  return error_of([&] { expand_hostlist(expression); });
}
std::string counts_error(std::string_view text) {
  return error_of([&] { expand_counts(text); });
}

TEST(Hostlist, PlainNamesAndRangesSplitAtCommasOutsideBrackets) {
  EXPECT_EQ(expand_hostlist("tux1,tux[3-5],login"), (Names{"tux1", "tux3", "tux4", "tux5", "login"}));
  EXPECT_EQ(expand_hostlist("n[1,3],m"), (Names{"n1", "n3", "m"}));
  EXPECT_EQ(expand_hostlist("login"), (Names{"login"}));
  EXPECT_EQ(expand_hostlist("c1-ib.cluster,c[2-3]-ib.cluster"),
            (Names{"c1-ib.cluster", "c2-ib.cluster", "c3-ib.cluster"}));
}

TEST(Hostlist, ExpandsTheManPagesExamples) {
  const Names linux_nodes = expand_hostlist("linux[0-64,128]");
  ASSERT_EQ(linux_nodes.size(), 66u);
  EXPECT_EQ(linux_nodes[0], "linux0");
  EXPECT_EQ(linux_nodes[10], "linux10");
  EXPECT_EQ(linux_nodes[64], "linux64");
  EXPECT_EQ(linux_nodes[65], "linux128");
  EXPECT_EQ(expand_hostlist("tux[0,8-10]"), (Names{"tux0", "tux8", "tux9", "tux10"}));
  EXPECT_EQ(expand_hostlist("lx[10-12],lx15"), (Names{"lx10", "lx11", "lx12", "lx15"}));
}

TEST(Hostlist, KeepsTheLowerBoundsWidth) {
  EXPECT_EQ(expand_hostlist("node[01-04,07]"), (Names{"node01", "node02", "node03", "node04", "node07"}));
  EXPECT_EQ(expand_hostlist("n[08-11]"), (Names{"n08", "n09", "n10", "n11"}));
  EXPECT_EQ(expand_hostlist("n[001-3]"), (Names{"n001", "n002", "n003"}));
  EXPECT_EQ(expand_hostlist("n[007]"), (Names{"n007"}));
  EXPECT_EQ(expand_hostlist("h[9-11]"), (Names{"h9", "h10", "h11"}));
  // The upper bound's width counts for nothing, as in Slurm.
  EXPECT_EQ(expand_hostlist("n[8-010]"), (Names{"n8", "n9", "n10"}));
  const Names wide = expand_hostlist("linux[0000-1023]");
  ASSERT_EQ(wide.size(), 1024u);
  EXPECT_EQ(wide[7], "linux0007");
  EXPECT_EQ(wide[1023], "linux1023");
}

TEST(Hostlist, KeepsTheOrderWrittenAndDuplicates) {
  EXPECT_EQ(expand_hostlist("n[3,1-2,1]"), (Names{"n3", "n1", "n2", "n1"}));
  EXPECT_EQ(expand_hostlist("n[1-2],n[1-2]"), (Names{"n1", "n2", "n1", "n2"}));
}

TEST(Hostlist, SeveralBracketsGiveTheirProductInSlurmsOrder) {
  EXPECT_EQ(expand_hostlist("rack[1-2]-node[1-2]"),
            (Names{"rack1-node1", "rack1-node2", "rack2-node1", "rack2-node2"}));
  EXPECT_EQ(expand_hostlist("a[1-2]b[3-4]"), (Names{"a1b3", "a1b4", "a2b3", "a2b4"}));
  EXPECT_EQ(expand_hostlist("a[1-2]b[3-4]c"), (Names{"a1b3c", "a1b4c", "a2b3c", "a2b4c"}));
  // With three or more, the last bracket varies fastest, then the first, the last but one slowest: what
  // scontrol show hostnames prints (its _push_range_list recurses from the last but one bracket).
  EXPECT_EQ(expand_hostlist("x[1-2]y[1-2]z[1-2]"),
            (Names{"x1y1z1", "x1y1z2", "x2y1z1", "x2y1z2", "x1y2z1", "x1y2z2", "x2y2z1", "x2y2z2"}));
  EXPECT_EQ(expand_hostlist("w[1-2]x[1-2]y[1-2]z[1-2]"),
            (Names{"w1x1y1z1", "w1x1y1z2", "w2x1y1z1", "w2x1y1z2", "w1x2y1z1", "w1x2y1z2", "w2x2y1z1", "w2x2y1z2",
                   "w1x1y2z1", "w1x1y2z2", "w2x1y2z1", "w2x1y2z2", "w1x2y2z1", "w1x2y2z2", "w2x2y2z1", "w2x2y2z2"}));
  EXPECT_EQ(expand_hostlist("[1-3]"), (Names{"1", "2", "3"}));
}

TEST(Hostlist, TakesUpTo65536HostsAndNoMore) {
  const Names most = expand_hostlist("n[0-65535]");
  ASSERT_EQ(most.size(), 65536u);
  EXPECT_EQ(most.back(), "n65535");
  EXPECT_EQ(expand_hostlist("a[0-255]b[0-255]").size(), 65536u);
  EXPECT_EQ(expand_hostlist("n[0-65534],m").size(), 65536u);
  EXPECT_EQ(expand_hostlist("n[18446744073709551615]"), (Names{"n18446744073709551615"}));
  for (const char* expression : {"n[0-999999999]", "n[0-65536]", "n[0-65535],m", "a[0-256]b[0-255]",
                                 "n[0-40000,0-40000]", "n[0-18446744073709551615]", "a[0-999999999].b[0-9]"})
    EXPECT_EQ(hostlist_error(expression),
              "hostlist '" + std::string(expression) + "': more than 65536 hosts (Slurm's limit)");
}

TEST(Hostlist, SaysWhatIsWrongAndWhere) {
  EXPECT_EQ(hostlist_error(""), "hostlist '': the expression is empty");
  EXPECT_EQ(hostlist_error("a,,b"), "hostlist 'a,,b': item 2 is empty");
  EXPECT_EQ(hostlist_error(",a"), "hostlist ',a': item 1 is empty");
  EXPECT_EQ(hostlist_error("a,"), "hostlist 'a,': item 2 is empty");
  EXPECT_EQ(hostlist_error("n[1-2"), "hostlist 'n[1-2': '[' at character 2 is never closed");
  EXPECT_EQ(hostlist_error("n1-2]"), "hostlist 'n1-2]': ']' at character 5 closes no '['");
  EXPECT_EQ(hostlist_error("n[1-2]]"), "hostlist 'n[1-2]]': ']' at character 7 closes no '['");
  EXPECT_EQ(hostlist_error("n[1[2]]"), "hostlist 'n[1[2]]': '[' at character 4 is nested in another");
  EXPECT_EQ(hostlist_error("n[]"), "hostlist 'n[]': an empty range in '[]'");
  EXPECT_EQ(hostlist_error("n[1,,3]"), "hostlist 'n[1,,3]': an empty range in '[1,,3]'");
  EXPECT_EQ(hostlist_error("n[1,]"), "hostlist 'n[1,]': an empty range in '[1,]'");
  EXPECT_EQ(hostlist_error("n[5-3]"), "hostlist 'n[5-3]': range '5-3' has its upper bound below its lower");
  EXPECT_EQ(hostlist_error("n[18446744073709551616]"),
            "hostlist 'n[18446744073709551616]': range '18446744073709551616' has a bound too large for 64 bits");
  EXPECT_EQ(hostlist_error("a, b"), "hostlist 'a, b': whitespace at character 3; items are separated by commas only");
  // Slurm reads "1-" as 1 and "+1" as 1: here they are typos.
  for (const char* range : {"a-3", "1-", "-3", "+1", "1-2-3", "0x10", "1x2"})
    EXPECT_EQ(hostlist_error("n[" + std::string(range) + "]"),
              "hostlist 'n[" + std::string(range) + "]': range '" + range + "' is not N or N-M in digits");
}

TEST(Counts, ExpandsSlurmsRepeats) {
  EXPECT_EQ(expand_counts("2(x3),1"), (std::vector<unsigned>{2, 2, 2, 1}));
  EXPECT_EQ(expand_counts("4"), (std::vector<unsigned>{4}));
  EXPECT_EQ(expand_counts("72(x2),36"), (std::vector<unsigned>{72, 72, 36}));
  // The example in Slurm's env.c, uint16_array_to_str: 1, 2, 1, 1, 1, 3, 2.
  EXPECT_EQ(expand_counts("1,2,1(x3),3,2"), (std::vector<unsigned>{1, 2, 1, 1, 1, 3, 2}));
  EXPECT_EQ(expand_counts("5(x1)"), (std::vector<unsigned>{5}));
  EXPECT_EQ(expand_counts("65535"), (std::vector<unsigned>{65535}));
  EXPECT_EQ(expand_counts("1(x65535),2").size(), 65536u);
}

TEST(Counts, SaysWhatIsWrongAndWhere) {
  EXPECT_EQ(counts_error(""), "counts '': the text is empty");
  EXPECT_EQ(counts_error("2,,1"), "counts '2,,1': entry 2 is empty");
  EXPECT_EQ(counts_error("2,"), "counts '2,': entry 2 is empty");
  EXPECT_EQ(counts_error("0"), "counts '0': entry '0' has a count of 0");
  EXPECT_EQ(counts_error("1,0(x2)"), "counts '1,0(x2)': entry '0(x2)' has a count of 0");
  EXPECT_EQ(counts_error("2(x0)"), "counts '2(x0)': entry '2(x0)' has a repeat of 0");
  EXPECT_EQ(counts_error("65536"), "counts '65536': entry '65536' has a count above 65535");
  EXPECT_EQ(counts_error("99999999999999999999999"),
            "counts '99999999999999999999999': entry '99999999999999999999999' has a count above 65535");
  EXPECT_EQ(counts_error("1(x65536),2"), "counts '1(x65536),2': more than 65536 hosts (Slurm's limit)");
  EXPECT_EQ(counts_error("1(x99999999999999999999999)"),
            "counts '1(x99999999999999999999999)': more than 65536 hosts (Slurm's limit)");
  for (const char* entry : {"x", "-1", "2(3)", "2(x3", "2(x)", "(x3)", "2(x3)4", "2(x3))", "2 ", "2(x-1)"})
    EXPECT_EQ(counts_error(entry),
              "counts '" + std::string(entry) + "': entry '" + entry + "' is not COUNT or COUNT(xREPEAT)");
}

TEST(SlurmSlots, RepeatsEachHostAsOftenAsItsCount) {
  EXPECT_EQ(slurm_slots("node[01-03]", "2(x3)"), (Names{"node01", "node01", "node02", "node02", "node03", "node03"}));
  EXPECT_EQ(slurm_slots("n[1-3]", "1,2,3"), (Names{"n1", "n2", "n2", "n3", "n3", "n3"}));
  EXPECT_EQ(slurm_slots("c[01-02],gpu1", "36(x2),4").size(), 76u);
  EXPECT_EQ(slurm_slots("c[01-02],gpu1", "36(x2),4")[72], "gpu1");
}

TEST(SlurmSlots, OneCountAppliesToEveryHost) {
  EXPECT_EQ(slurm_slots("tux[0,8]", "3"), (Names{"tux0", "tux0", "tux0", "tux8", "tux8", "tux8"}));
  EXPECT_EQ(slurm_slots("tux1", "2"), (Names{"tux1", "tux1"}));
}

TEST(SlurmSlots, WithoutCountsOneSlotAHost) {
  EXPECT_EQ(slurm_slots("tux1,tux[3-4]", nullptr), (Names{"tux1", "tux3", "tux4"}));
}

TEST(SlurmSlots, SaysWhatIsWrong) {
  const std::string outside = "SLURM_JOB_NODELIST is not set: not inside a Slurm allocation";
  EXPECT_EQ(error_of([] { slurm_slots(nullptr, "2"); }), outside);
  EXPECT_EQ(error_of([] { slurm_slots("", nullptr); }), outside);
  EXPECT_EQ(error_of([] { slurm_slots("n[1-3]", "2(x2)"); }),
            "the counts '2(x2)' are for 2 hosts, the nodelist 'n[1-3]' names 3");
  EXPECT_EQ(error_of([] { slurm_slots("n1", "2(x3)"); }),
            "the counts '2(x3)' are for 3 hosts, the nodelist 'n1' names 1");
  EXPECT_EQ(error_of([] { slurm_slots("n[1-2", "2"); }), "hostlist 'n[1-2': '[' at character 2 is never closed");
  EXPECT_EQ(error_of([] { slurm_slots("n[1-2]", "0"); }), "counts '0': entry '0' has a count of 0");
  EXPECT_EQ(error_of([] { slurm_slots("n[1-2]", ""); }), "counts '': the text is empty");
}

}  // namespace
}  // namespace dps::cluster
