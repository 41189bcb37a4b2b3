// A library that is not a scheduler (no DPS_CLUSTER_SCHEDULER): --scheduler refuses it, saying so.
extern "C" int not_a_scheduler() { return 0; }
