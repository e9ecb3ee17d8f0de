"""The long runs (`make stress`) are collected only with POIMEN_STRESS=1."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))    # secrets_corpus
sys.path.insert(0, str(Path(__file__).parent))        # crashkit, concurrency kit

collect_ignore_glob = [] if os.environ.get("POIMEN_STRESS") else ["test_*.py"]
