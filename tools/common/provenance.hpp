// Where and when a measurement was made, as a model or a kernel file records it beside its figures:
// the host's name and its first address that is not the loopback's (the namespaced hosts of
// scripts/netns-cluster share a name, not an address), and the local time in ISO 8601.
//
//   model.calibration.at = measured_at();        // "2026-11-26T18:15:14+0000"
//   model.calibration.hosts.push_back(measured_on());   // "node07 10.1.0.7"
#pragma once

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <ctime>
#include <string>

inline std::string measured_on() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::string out = name;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || (a->ifa_flags & IFF_LOOPBACK)) continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    out += std::string(" ") + text;
    break;
  }
  ::freeifaddrs(list);
  return out;
}

inline std::string measured_at() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &local);
  return text;
}
