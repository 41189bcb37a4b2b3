// DPS: flow graphs of split, leaf, merge and stream operations on malleable thread collections.
// Include this one header; see application.hpp for a complete program.
#pragma once

#include "dps/application.hpp"
#include "dps/compute.hpp"
#include "dps/errors.hpp"
#include "dps/future.hpp"
#include "dps/graph.hpp"
#include "dps/large_array.hpp"
#include "dps/operation.hpp"
#include "dps/route.hpp"
#include "dps/threads.hpp"
#include "dps/trace.hpp"
#include "dps/trace_file.hpp"
