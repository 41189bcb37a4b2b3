// Whether this build measures. Tests that time things (bandwidth, CPU shares, calibration) assert
// their figures only in an optimized build without sanitizers: under ASan or TSan they would measure
// the sanitizer, so there they check structure only.
//
//   if (kMeasures) {
//     EXPECT_GT(model.network.bandwidth, 0.7 * link);
//   }
#pragma once

namespace dps::test {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DPS_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DPS_TEST_SANITIZED 1
#endif

#if defined(NDEBUG) && !defined(DPS_TEST_SANITIZED)
inline constexpr bool kMeasures = true;
#else
inline constexpr bool kMeasures = false;
#endif

}  // namespace dps::test
