// libsystemd's functions that feedingest calls (`watch`'s readiness and watchdog), each a stub that loads libsystemd on
// first use (see include/CLibraryLoader.h). Each definition repeats the prototype of <systemd/sd-daemon.h>.
#include <systemd/sd-daemon.h>
#include "loader.h"

FEEDINGEST_STUB int sd_notify(int unset_environment, const char *state) {
    return FEEDINGEST_LAZY(feedingest_libsystemd, sd_notify)(unset_environment, state);
}

FEEDINGEST_STUB int sd_watchdog_enabled(int unset_environment, uint64_t *usec) {
    return FEEDINGEST_LAZY(feedingest_libsystemd, sd_watchdog_enabled)(unset_environment, usec);
}
