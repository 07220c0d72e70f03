package io.schedulerpy.storm.monitor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Bytes written by the Netty client threads of this worker in a window ({@code netty_written_bytes},
 * {@code docs/monitoring-format.md} §1.1), from Linux's per-thread I/O accounting.
 *
 * <p>Storm's Netty clients (storm-client {@code messaging/netty/Client.java}) write their message
 * batches to the other workers from the event-loop threads of one group per worker, named by
 * {@code messaging/netty/Context.java} with {@code new NettyRenameThreadFactory("client" + "-worker")}:
 * {@code client-worker-<n>}, which is the thread's {@code comm} (Linux keeps its first 15 characters).
 * {@code /proc/self/task/<tid>/io}'s {@code wchar} is the bytes a thread passed to write system calls
 * ({@code write}, {@code writev}: what Java NIO's {@code SocketChannel.write} calls). This class sums the
 * growth of {@code wchar} over the threads whose {@code comm} starts with {@code client-worker}:
 * <ul>
 *   <li>a thread seen at the previous call: its increase (a {@code wchar} that went down is a new
 *       thread under a reused tid: its whole value, and its {@code comm} is read again);</li>
 *   <li>a thread first seen now (after the first call): its whole {@code wchar};</li>
 *   <li>a thread that exited: nothing (what it wrote since the previous call is lost).</li>
 * </ul>
 * The first call records the baseline and reports nothing. Cost per call: one listing of
 * {@code /proc/self/task} and one read of {@code io} per client thread; {@code comm} is read once per
 * new tid (tid → client thread or not is cached while the tid is listed). Not Linux, or
 * {@code /proc/self/task} or a client thread's {@code io} unreadable: unknown (logged once), and the
 * next readable call records a new baseline. Single-threaded (the monitor's window thread).
 */
final class NettyWrites {
    /** The prefix of the {@code comm} of Storm's Netty client event-loop threads. */
    static final String CLIENT_THREAD_PREFIX = "client-worker";
    static final String PROBLEM = "netty-writes";

    private final Path taskDir;
    private final OnceLog problems;
    /** tid → whether it is a Netty client thread, for the tids listed at the previous call. */
    private final Map<Long, Boolean> isClient = new HashMap<>();
    /** tid → its {@code wchar} at the previous call, for the client threads. */
    private final Map<Long, Long> lastWchar = new HashMap<>();
    private boolean baselined;

    NettyWrites(OnceLog problems) {
        this(Paths.get("/proc", "self"), problems);
    }

    /** Reads {@code <procSelf>/task/<tid>/comm} and {@code <procSelf>/task/<tid>/io} (tests: a fake tree). */
    NettyWrites(Path procSelf, OnceLog problems) {
        this.taskDir = procSelf.resolve("task");
        this.problems = problems;
    }

    /**
     * Bytes the Netty client threads passed to write system calls since the previous call, or -1 when
     * unknown: at the first call (the baseline), or when the threads' I/O accounting cannot be read.
     */
    long window() {
        Set<Long> tids;
        try {
            tids = list();
        } catch (IOException | RuntimeException e) {
            return unknown("scheduler-py monitor: cannot list " + taskDir + " (not Linux?); netty_written_bytes "
                + "is left out of the window records", e);
        }
        isClient.keySet().retainAll(tids);
        lastWchar.keySet().retainAll(tids);
        Map<Long, Long> now = new HashMap<>();
        long sum = 0;
        for (long tid : tids) {
            try {
                Boolean client = isClient.get(tid);
                if (client == null) {
                    client = isClientThread(tid);
                    isClient.put(tid, client);
                }
                if (!client) {
                    continue;
                }
                long w = wchar(tid);
                Long before = lastWchar.get(tid);
                if (before != null && w < before) {
                    // a new thread under a reused tid: is it still a client thread?
                    client = isClientThread(tid);
                    isClient.put(tid, client);
                    if (!client) {
                        continue;
                    }
                }
                now.put(tid, w);
                sum += before == null || w < before ? w : w - before;
            } catch (IOException | RuntimeException e) {
                if (!Files.isDirectory(taskDir.resolve(Long.toString(tid)))) {
                    isClient.remove(tid);                    // exited since the listing: nothing
                    continue;
                }
                return unknown("scheduler-py monitor: cannot read the comm or io of "
                    + taskDir.resolve(Long.toString(tid)) + "; netty_written_bytes is left out of the records", e);
            }
        }
        boolean report = baselined;
        lastWchar.clear();
        lastWchar.putAll(now);
        baselined = true;
        problems.clear(PROBLEM);
        return report ? sum : -1;
    }

    private long unknown(String message, Throwable error) {
        problems.warn(PROBLEM, message, error);
        baselined = false;                                   // the next readable call is a new baseline
        lastWchar.clear();
        return -1;
    }

    private Set<Long> list() throws IOException {
        Set<Long> tids = new HashSet<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(taskDir)) {
            for (Path p : dir) {
                try {
                    tids.add(Long.parseLong(p.getFileName().toString()));
                } catch (NumberFormatException e) {
                    // not a thread
                }
            }
        }
        return tids;
    }

    private boolean isClientThread(long tid) throws IOException {
        String comm = new String(Files.readAllBytes(taskDir.resolve(Long.toString(tid)).resolve("comm")),
            StandardCharsets.UTF_8);
        return comm.startsWith(CLIENT_THREAD_PREFIX);
    }

    /** The {@code wchar} line of {@code task/<tid>/io}. */
    private long wchar(long tid) throws IOException {
        String io = new String(Files.readAllBytes(taskDir.resolve(Long.toString(tid)).resolve("io")),
            StandardCharsets.US_ASCII);
        for (String line : io.split("\n")) {
            if (line.startsWith("wchar:")) {
                long w = Long.parseLong(line.substring("wchar:".length()).trim());
                if (w < 0) {
                    throw new IOException("negative wchar in " + tid + "/io: " + line);
                }
                return w;
            }
        }
        throw new IOException("no wchar line in " + tid + "/io");
    }
}
