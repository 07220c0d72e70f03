package io.schedulerpy.storm.monitor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Reads {@code /proc/<pid>/stat} (Linux): CPU time of a process (user + system, clock ticks) and
 * its start time, which tells a reused pid from the original process.
 *
 * <p>Ticks are converted with {@code CLK_TCK} = 100: Linux exports times to user space in
 * {@code USER_HZ} units, which is 100 on every mainstream architecture (x86, arm, arm64, ppc,
 * s390, riscv) whatever the kernel's internal HZ; Java cannot call {@code sysconf(_SC_CLK_TCK)},
 * and the unit tests check the value against {@code getconf CLK_TCK}.
 */
final class ProcStat {
    static final long CLK_TCK = 100;
    private static final Path PROC = Paths.get("/proc");

    final long pid;
    final String comm;
    final char state;
    final long ppid;
    final long utimeTicks;
    final long stimeTicks;
    final long startTimeTicks;

    private ProcStat(long pid, String comm, char state, long ppid, long utime, long stime, long start) {
        this.pid = pid;
        this.comm = comm;
        this.state = state;
        this.ppid = ppid;
        this.utimeTicks = utime;
        this.stimeTicks = stime;
        this.startTimeTicks = start;
    }

    /** User + system CPU time in ms. */
    double cpuMs() {
        return (utimeTicks + stimeTicks) * 1000.0 / CLK_TCK;
    }

    /**
     * Parse one {@code /proc/<pid>/stat} line. The command name (field 2) is in parentheses and
     * may itself contain spaces and parentheses, so fields are counted from the last ')'.
     */
    static ProcStat parse(String line) {
        if (line == null) {
            throw new IllegalArgumentException("no stat line");
        }
        int open = line.indexOf('(');
        int close = line.lastIndexOf(')');
        if (open <= 0 || close < open) {
            throw new IllegalArgumentException("malformed stat line: " + line);
        }
        long pid = Long.parseLong(line.substring(0, open).trim());
        String comm = line.substring(open + 1, close);
        String[] f = line.substring(close + 1).trim().split("\\s+");
        // f[0] = field 3 (state), f[1] = 4 (ppid), f[11] = 14 (utime), f[12] = 15 (stime), f[19] = 22 (starttime)
        if (f.length < 20) {
            throw new IllegalArgumentException("stat line has " + (f.length + 2) + " fields: " + line);
        }
        return new ProcStat(pid, comm, f[0].charAt(0), Long.parseLong(f[1]),
            Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[19]));
    }

    /** The stat of a live process, or null if it is gone (or /proc is unavailable). */
    static ProcStat read(long pid) {
        try {
            byte[] b = Files.readAllBytes(PROC.resolve(Long.toString(pid)).resolve("stat"));
            ProcStat s = parse(new String(b, StandardCharsets.UTF_8).trim());
            return s.state == 'Z' || s.state == 'X' ? null : s;
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Whether {@code /proc/self/stat} can be read and parsed (i.e. this is Linux). */
    static boolean available() {
        return read(ProcessHandle.current().pid()) != null;
    }

    /** The arguments of a process ({@code /proc/<pid>/cmdline}, NUL separated); empty if unreadable. */
    static List<String> cmdline(long pid) {
        try {
            byte[] b = Files.readAllBytes(PROC.resolve(Long.toString(pid)).resolve("cmdline"));
            List<String> args = new ArrayList<>();
            int from = 0;
            for (int i = 0; i < b.length; i++) {
                if (b[i] == 0) {
                    args.add(new String(b, from, i - from, StandardCharsets.UTF_8));
                    from = i + 1;
                }
            }
            if (from < b.length) {
                args.add(new String(b, from, b.length - from, StandardCharsets.UTF_8));
            }
            return args;
        } catch (IOException | RuntimeException e) {
            return Collections.emptyList();
        }
    }

    @Override
    public String toString() {
        return pid + " (" + comm + ") " + state + " ppid=" + ppid + " utime=" + utimeTicks + " stime=" + stimeTicks
            + " start=" + startTimeTicks;
    }
}
