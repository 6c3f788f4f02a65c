#ifndef FEEDINGEST_CSYSTEMD_SHIM_H
#define FEEDINGEST_CSYSTEMD_SHIM_H
// libsystemd's service notification API (Debian libsystemd-dev): sd_notify(3) and sd_watchdog_enabled(3), for
// `feedingest watch` under a Type=notify unit.
#include <systemd/sd-daemon.h>
#endif
