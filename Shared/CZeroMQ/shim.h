#ifndef COMPASS_CZEROMQ_SHIM_H
#define COMPASS_CZEROMQ_SHIM_H
#include <zmq.h>
#ifdef __linux__
/* The socket loops wake zmq_poll through an eventfd. */
#include <sys/eventfd.h>
#endif
#endif
