"""Training's time left leaves out its evaluations: the step rate is that of the steps (a mid-run evaluation made
the time left jump from 2:41 to 19:28 and back). A clock of the test's own: nothing is timed."""

from weakrank.progress import tqdm


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def bar_on(clock: Clock) -> tqdm:
    bar = tqdm(total=100, desc="training", unit="step", mininterval=0, miniters=1, disable=False)
    bar._time = clock
    bar.start_t = bar.last_print_t = clock()
    return bar


def test_the_time_left_leaves_out_what_is_done_between_steps():
    clock, other = Clock(), Clock()
    paused, plain = bar_on(clock), bar_on(other)
    for step in range(1, 21):
        for bar, time in ((paused, clock), (plain, other)):
            time.now += 1.0  # a step: one second
            bar.update(1)
        if step == 10:  # an evaluation of 60 s after the tenth step
            with paused.paused():
                clock.now += 60
            other.now += 60
    assert abs(paused.format_dict["rate"] - 1.0) < 0.05  # one step a second: 80 s left
    assert plain.format_dict["rate"] < 0.9  # the evaluation counted as slow steps
    assert paused.format_dict["elapsed"] == plain.format_dict["elapsed"] == 80  # the time taken is all of it
    paused.close()
    plain.close()
