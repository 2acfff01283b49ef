// Package netpoll is what the load generator's wire protocols share below
// the engine: raw socket reads and writes (RawRead, RawWrite, RawConn) and,
// on Linux, the epoll set of a multiplexed loop (Poller) with the socket
// taken out of Go's netpoller (Detach). It knows no protocol and no engine.
package netpoll
