#ifndef FEEDINGEST_CNETLINK_SHIM_H
#define FEEDINGEST_CNETLINK_SHIM_H
// libmnl (Debian libmnl-dev), the netlink helper library, and the kernel's rtnetlink definitions: the route monitor
// of the Reachability module reads the routing table and its changes through NETLINK_ROUTE.
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

// Macros Swift cannot import: compound flags and group masks, as constants
// (https://man7.org/linux/man-pages/man7/rtnetlink.7.html, man 7 netlink).
static const unsigned short CNetlink_NLM_F_REQUEST = NLM_F_REQUEST;
static const unsigned short CNetlink_NLM_F_DUMP = NLM_F_DUMP;
static const unsigned int CNetlink_route_groups =
    RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE | RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
static const unsigned int CNetlink_MNL_SOCKET_AUTOPID = MNL_SOCKET_AUTOPID;
// MNL_SOCKET_BUFFER_SIZE calls getpagesize(): the receive buffer size libmnl recommends.
static inline size_t CNetlink_socket_buffer_size(void) { return MNL_SOCKET_BUFFER_SIZE; }

#endif
