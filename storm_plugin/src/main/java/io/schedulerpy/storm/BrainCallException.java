package io.schedulerpy.storm;

/**
 * The brain could not be asked, or did not give a usable answer, this round. Carries a short
 * human-readable reason (what failed) and a hint (what an operator can do about it).
 */
public class BrainCallException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String reason;
    private final String hint;

    public BrainCallException(String reason, String hint, Throwable cause) {
        super(reason, cause);
        this.reason = reason;
        this.hint = hint;
    }

    /** What failed, e.g. "brain at 127.0.0.1:9627 unreachable (Connection refused)". */
    public String getReason() {
        return reason;
    }

    /** What to do about it, e.g. "start it with `scheduler-py serve`". */
    public String getHint() {
        return hint;
    }
}
