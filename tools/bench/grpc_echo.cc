/* SPDX-License-Identifier: MIT */
/*
 * The gRPC peer of tools/bench/rpc: a unary Echo(bytes) -> bytes server
 * (tools/bench/echo.proto) and the load client that calls it, both gRPC
 * C++ as an application would use them (Debian 12's 1.51).
 *
 *   bench-grpc-echo --server unix:PATH [--callback]
 *   bench-grpc-echo --client unix:PATH CALLERS CALLS SIZE
 *
 * The server prints READY once it listens and runs until SIGTERM or
 * SIGINT; it is gRPC's synchronous server (a thread pool that gRPC
 * sizes), or with --callback its callback API. The client opens one
 * channel (one HTTP/2 connection, as the C benchmark shares one tk_client
 * or one NNG socket between its callers), waits until it is connected,
 * then CALLERS threads each make CALLS blocking unary calls of SIZE bytes,
 * after a warm-up of CALLS/10 + 1 each. It prints one line, as
 * client/ts/bench/ping.mjs does: "p50_us p99_us calls_per_s errors".
 * bench-rpc (tools/bench/rpc_bench.c) starts both.
 */
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>

#include <grpcpp/grpcpp.h>

#include "echo.grpc.pb.h"

namespace
{

/* Latencies by the monotonic clock; deadlines by the wall clock, the
 * only one gRPC's TimePoint takes. */
using clock_type = std::chrono::steady_clock;
using wall_clock = std::chrono::system_clock;

class SyncEcho final : public tkbench::Echo::Service
{
    grpc::Status Echo(grpc::ServerContext * /*ctx*/,
                      const tkbench::EchoMessage *req,
                      tkbench::EchoMessage *rep) override
    {
        rep->set_data(req->data());
        return grpc::Status::OK;
    }
};

class CallbackEcho final : public tkbench::Echo::CallbackService
{
    grpc::ServerUnaryReactor *Echo(grpc::CallbackServerContext *ctx,
                                   const tkbench::EchoMessage *req,
                                   tkbench::EchoMessage *rep) override
    {
        rep->set_data(req->data());
        grpc::ServerUnaryReactor *r = ctx->DefaultReactor();
        r->Finish(grpc::Status::OK);
        return r;
    }
};

int serve(const std::string &addr, bool callback)
{
    /* Blocked before gRPC starts its threads, so that they inherit the
     * mask and sigwait below is the one that takes the signal. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0)
        return 1;
    SyncEcho sync_service;
    CallbackEcho callback_service;
    grpc::ServerBuilder builder;
    builder.AddListeningPort(addr, grpc::InsecureServerCredentials());
    if (callback)
        builder.RegisterService(&callback_service);
    else
        builder.RegisterService(&sync_service);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (!server) {
        std::fprintf(stderr, "bench-grpc-echo: cannot listen on %s\n",
                     addr.c_str());
        return 1;
    }
    std::printf("READY\n");
    if (std::fflush(stdout) != 0)
        return 1;
    int sig = 0;
    sigwait(&set, &sig);
    server->Shutdown(wall_clock::now() + std::chrono::seconds(1));
    return 0;
}

/* Opens once for all the callers: the clock starts when it opens. */
class Gate
{
  public:
    void open()
    {
        {
            std::lock_guard<std::mutex> lock(mu_);
            open_ = true;
        }
        cv_.notify_all();
    }
    void wait()
    {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return open_; });
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool open_ = false;
};

struct Result {
    double p50_us = 0, p99_us = 0, calls_per_s = 0;
    int errors = 0;
};

/* One caller: calls blocking Echo calls, each latency into lat. */
int call_loop(tkbench::Echo::Stub *stub, const tkbench::EchoMessage &req,
              int calls, std::vector<long long> *lat)
{
    int errors = 0;
    for (int i = 0; i < calls; i++) {
        grpc::ClientContext ctx;
        tkbench::EchoMessage rep;
        clock_type::time_point t0 = clock_type::now();
        ctx.set_deadline(wall_clock::now() + std::chrono::seconds(10));
        grpc::Status st = stub->Echo(&ctx, req, &rep);
        lat->push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           clock_type::now() - t0)
                           .count());
        if (!st.ok() || rep.data().size() != req.data().size())
            errors++;
    }
    return errors;
}

Result measure(tkbench::Echo::Stub *stub, int callers, int calls, size_t size)
{
    tkbench::EchoMessage req;
    req.set_data(std::string(size, 'p'));
    Gate gate;
    std::vector<std::vector<long long>> lat(static_cast<size_t>(callers));
    std::vector<int> errors(static_cast<size_t>(callers), 0);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < lat.size(); i++) {
        lat[i].reserve(static_cast<size_t>(calls));
        threads.emplace_back([&, i] {
            gate.wait();
            errors[i] = call_loop(stub, req, calls, &lat[i]);
        });
    }
    clock_type::time_point t0 = clock_type::now();
    gate.open();
    for (std::thread &t : threads)
        t.join();
    double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
    std::vector<long long> all;
    Result r;
    for (size_t i = 0; i < lat.size(); i++) {
        all.insert(all.end(), lat[i].begin(), lat[i].end());
        r.errors += errors[i];
    }
    std::sort(all.begin(), all.end());
    r.p50_us = static_cast<double>(all[all.size() / 2]) / 1000.0;
    r.p99_us = static_cast<double>(all[all.size() * 99 / 100]) / 1000.0;
    r.calls_per_s = static_cast<double>(all.size()) / wall;
    return r;
}

int load(const std::string &addr, int callers, int calls, size_t size)
{
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateChannel(addr, grpc::InsecureChannelCredentials());
    if (!channel->WaitForConnected(wall_clock::now() +
                                   std::chrono::seconds(10))) {
        std::fprintf(stderr, "bench-grpc-echo: cannot connect to %s\n",
                     addr.c_str());
        return 1;
    }
    std::unique_ptr<tkbench::Echo::Stub> stub = tkbench::Echo::NewStub(channel);
    measure(stub.get(), callers, calls / 10 + 1, size); /* warm up */
    Result r = measure(stub.get(), callers, calls, size);
    std::printf("%.1f %.1f %.0f %d\n", r.p50_us, r.p99_us, r.calls_per_s,
                r.errors);
    return std::fflush(stdout) == 0 ? 0 : 1;
}

/* A whole number in [min, max] into *out; false when s is not one. */
bool number(const char *s, long min, long max, long *out)
{
    char *end = nullptr;
    errno = 0;
    long v = std::strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    if ((argc == 3 || argc == 4) && std::strcmp(argv[1], "--server") == 0) {
        bool callback = argc == 4 && std::strcmp(argv[3], "--callback") == 0;
        if (argc == 3 || callback)
            return serve(argv[2], callback);
    }
    long callers = 0, calls = 0, size = 0;
    if (argc == 6 && std::strcmp(argv[1], "--client") == 0 &&
        number(argv[3], 1, 4096, &callers) &&
        number(argv[4], 1, 100000000, &calls) &&
        number(argv[5], 0, 64L << 20, &size))
        return load(argv[2], static_cast<int>(callers), static_cast<int>(calls),
                    static_cast<size_t>(size));
    std::fprintf(stderr,
                 "usage: bench-grpc-echo --server unix:PATH [--callback]\n"
                 "       bench-grpc-echo --client unix:PATH CALLERS CALLS "
                 "SIZE\n");
    return 2;
}
