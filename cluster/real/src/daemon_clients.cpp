// The daemon's clients: submissions, the queue's listing, cancellations.
#include "daemon_parts.hpp"

#include <cstdio>
#include <stdexcept>

namespace dps::cluster {

// A client's request, a line; the answer, lines ending with "ok" or one "error REASON".
void Daemon::client_request(Connection& c, const std::string& text) {
  const auto space = std::min(text.find(' '), text.size());
  const std::string verb = text.substr(0, space), rest = space < text.size() ? text.substr(space + 1) : "";
  try {
    if (verb == "submit") {
      c.write("ok " + std::to_string(submit_line(rest)) + "\n");
    } else if (verb == "queue") {
      for (const Entry& e : entries_) {
        const bool arrived =
            e.state != Entry::State::Pending && !(e.state == Entry::State::Cancelled && e.arrival == SIZE_MAX);
        const JobRecord* r = arrived ? &dispatcher_.record(dispatcher_.running(e.arrival)) : nullptr;
        const double started = r && r->start >= 0 ? r->start : now(), ended = r && r->end >= 0 ? r->end : now();
        char figures[160];
        std::snprintf(figures, sizeof figures, "job %llu %s %zu %.3f %.3f", static_cast<unsigned long long>(e.job.id),
                      kStates[static_cast<int>(e.state)],
                      r && e.state == Entry::State::Running ? dispatcher_.running(e.arrival).size() : e.job.size,
                      r ? started - e.job.submit : 0.0, r && r->start >= 0 ? ended - r->start : 0.0);
        c.write(std::string(figures) + " " + joined(e.job.command, ' ') + "\n");
      }
      c.write("ok\n");
    } else if (verb == "cancel") {
      std::uint64_t id = 0;
      Entry* e =
          std::sscanf(rest.c_str(), "%llu", reinterpret_cast<unsigned long long*>(&id)) == 1 ? entry_of(id) : nullptr;
      if (!e) throw std::invalid_argument("no job " + rest);
      if (e->state == Entry::State::Done || e->state == Entry::State::Failed || e->state == Entry::State::Cancelled)
        throw std::invalid_argument("job " + rest + " is over");
      cancel(*e);
      c.write("ok\n");
    } else {
      throw std::invalid_argument("no request '" + verb + "' (submit, queue, cancel)");
    }
  } catch (const std::exception& error) {
    c.write(std::string("error ") + error.what() + "\n");
  }
}

std::uint64_t Daemon::submit_line(const std::string& text) {
  nlohmann::json request;
  try {
    request = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error&) {
    throw std::invalid_argument("a submission is JSON: {\"job\": {...}, \"output\": FILE, \"error\": FILE}");
  }
  if (!request.is_object() || !request.contains("job")) throw std::invalid_argument("a submission holds a \"job\"");
  auto parsed = job_of(request["job"], classes_, options_.slots.size(), "the submission");
  if (!parsed)
    throw std::invalid_argument("the job asks " + request["job"].value("size", nlohmann::json(0)).dump() +
                                " nodes, the pool has " + std::to_string(options_.slots.size()));
  Job job = std::move(*parsed);
  job.submit = now();
  job.id = 0;
  submit(std::move(job));
  Entry& e = entries_.back();
  for (auto [key, file] : {std::pair{"output", &e.output}, std::pair{"error", &e.error}})
    if (request.contains(key) && request[key].is_string()) *file = request[key].get<std::string>();
  save(e);
  return e.job.id;
}

void Daemon::cancel(Entry& e) {
  e.reason = "cancelled";
  switch (e.state) {
    case Entry::State::Pending:
      e.state = Entry::State::Cancelled;
      e.arrival = SIZE_MAX;
      ++done_;
      save(e);
      break;
    case Entry::State::Queued:
      e.state = Entry::State::Cancelled;
      dispatcher_.withdraw(e.job);
      ++done_;
      save(e);
      break;
    case Entry::State::Running:
      if (e.process) e.process->kill();  // its end comes as its process's: its hosts are freed then
      break;
    default: break;
  }
}

}  // namespace dps::cluster
