#ifndef COMPASS_CZEROMQ_SHIM_H
#define COMPASS_CZEROMQ_SHIM_H
#include <zmq.h>
#endif
