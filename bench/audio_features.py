"""Throughput of the audio feature extraction on a generated 60 s recording.

Utterances are back to back and 3.9 s long (M-Arg: 6,527 sentences in about 7 hours), each clipped
with the paper's +-2 s buffer. Prints utterances per second, seconds of audio per second and the
time of a second (fully cached) run.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from gnn.audio import FeatureConfig, Segment, compute_features, load_audio

BENCH_QUICK_ARGS = ["--seconds", "12"]


def main(seconds: float = 60.0, utterance_s: float = 3.9, sr: int = 22050) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = np.arange(int(seconds * sr)) / sr
        rng = np.random.default_rng(0)
        y = 0.4 * np.sin(2 * np.pi * 220 * (1 + (t // 2.0) % 4) * t) + 0.05 * rng.standard_normal(t.size)
        audio = root / "part.wav"
        sf.write(audio, y.astype(np.float32), sr)
        starts = np.arange(0.0, seconds - utterance_s + 1e-9, utterance_s)
        segments = [Segment(f"u{i}", audio, float(s), float(s + utterance_s)) for i, s in enumerate(starts)]

        # Warm up librosa (imports, numba-compiled kernels) so that the timing is the steady state.
        compute_features(segments[:1], root / "warmup", FeatureConfig())
        started = time.perf_counter()
        load_audio(audio, sr)
        decode = time.perf_counter() - started

        report = compute_features(segments, root / "cache", FeatureConfig())
        clip_seconds = sum(min(seconds, s.end + 2) - max(0.0, s.start - 2) for s in segments)
        again = compute_features(segments, root / "cache", FeatureConfig())

    print(f"recording: {seconds:.0f} s at {sr} Hz, {len(segments)} utterances of {utterance_s} s (+-2 s buffer)")
    print(f"decode whole file: {decode * 1000:.1f} ms")
    print(f"features: {report.computed} utterances in {report.seconds:.2f} s = {report.per_second:.1f} utterances/s")
    print(f"          {clip_seconds / report.seconds:.1f} s of clipped audio per second")
    print(f"          {len(FeatureConfig().columns())} columns per utterance")
    print(f"cached re-run: {again.cached} cached, {again.computed} computed, {again.seconds * 1000:.1f} ms")
    from bench.harness import record

    # M-Arg has 6,527 utterances: featurising all of them within an hour needs 1.8 utterances/s.
    record("audio features: utterances per second", report.per_second, "utt/s", 6527 / 3600, "higher")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the generated recording")
    main(parser.parse_args().seconds)
