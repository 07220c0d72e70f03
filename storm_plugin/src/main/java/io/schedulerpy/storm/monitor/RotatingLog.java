package io.schedulerpy.storm.monitor;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Appends lines to a file, rotating it when the next line would push it past {@code maxBytes}:
 * {@code f} → {@code f.1} → … → {@code f.<keep>}, the oldest is deleted. The file is opened for
 * each append (one line per window), so a file moved or deleted by someone else is simply
 * recreated.
 */
final class RotatingLog {
    private final Path file;
    private final long maxBytes;
    private final int keep;

    RotatingLog(Path file, long maxBytes, int keep) {
        this.file = file;
        this.maxBytes = maxBytes;
        this.keep = keep;
    }

    Path file() {
        return file;
    }

    synchronized void append(String line) throws IOException {
        byte[] bytes = (line + "\n").getBytes(StandardCharsets.UTF_8);
        Path dir = file.getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        long size = Files.exists(file) ? Files.size(file) : 0;
        if (size > 0 && size + bytes.length > maxBytes) {
            rotate();
        }
        try (OutputStream out = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
            StandardOpenOption.WRITE)) {
            out.write(bytes);
        }
    }

    private void rotate() throws IOException {
        if (keep <= 0) {
            Files.deleteIfExists(file);
            return;
        }
        Files.deleteIfExists(numbered(keep));
        for (int i = keep - 1; i >= 1; i--) {
            Path from = numbered(i);
            if (Files.exists(from)) {
                Files.move(from, numbered(i + 1), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        Files.move(file, numbered(1), StandardCopyOption.REPLACE_EXISTING);
    }

    Path numbered(int i) {
        return file.resolveSibling(file.getFileName() + "." + i);
    }
}
