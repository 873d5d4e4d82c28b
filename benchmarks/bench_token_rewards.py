"""Token ids -> token-level reward tensor: verl's naive manager loop vs verl-rewards.

    python benchmarks/bench_token_rewards.py [--n 2048]

Both paths start from the same right-padded batch (2048 responses of about
90 tokens, 65-116, a tokenizer built in-process) and the same reward, and
must produce the same tensor. The baseline reproduces verl's
NaiveRewardManager loop: per item, index the batch, sum two mask slices,
decode prompt and response, call the reward, write one tensor element.
verl-rewards decodes the valid ids with one call to the fast tokenizer's
Rust backend (``decode_batch``), scores the batch with the local executor,
and writes every score with one scatter.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from verl_rewards import Scorer
from verl_rewards.token_rewards import score_responses

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import rewards  # noqa: E402

WORDS = ("the cost of apples is dollars so she pays each week total then we add "
         "multiply divide remaining answer step first next because therefore").split()


def build_tokenizer() -> PreTrainedTokenizerFast:
    """A small BPE tokenizer trained in-process on synthetic math text."""
    rng = random.Random(0)
    corpus = [" ".join(rng.choice([*WORDS, str(rng.randint(0, 999))]) for _ in range(40)) for _ in range(2000)]
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=600, special_tokens=["[PAD]", "[UNK]", "[EOS]"]))
    from tokenizers import decoders

    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", eos_token="[EOS]")


def build_batch(tokenizer: PreTrainedTokenizerFast, n: int, prompt_len: int = 64, response_len: int = 160):
    rng = random.Random(1)
    answers = [rng.randint(0, 999) for _ in range(n)]
    responses = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 110))) +
                 f" so the answer is {a if rng.random() < 0.5 else a + 1}" for a in answers]
    prompts = [" ".join(rng.choice(WORDS) for _ in range(30)) for _ in range(n)]
    pad = tokenizer.pad_token_id
    p_ids = torch.full((n, prompt_len), pad)
    r_ids = torch.full((n, response_len), pad)
    attention = torch.zeros((n, prompt_len + response_len), dtype=torch.long)
    for i, (p, r) in enumerate(zip(prompts, responses)):
        p_tok = tokenizer(p)["input_ids"][-prompt_len:]
        r_tok = tokenizer(r)["input_ids"][:response_len]
        p_ids[i, prompt_len - len(p_tok):] = torch.tensor(p_tok)  # prompts left-padded
        r_ids[i, : len(r_tok)] = torch.tensor(r_tok)  # responses right-padded
        attention[i, prompt_len - len(p_tok): prompt_len] = 1
        attention[i, prompt_len: prompt_len + len(r_tok)] = 1
    return p_ids, r_ids, attention, [str(a) for a in answers]


def naive_manager(tokenizer, p_ids, r_ids, attention, truths) -> torch.Tensor:
    """verl's NaiveRewardManager.__call__ loop, item by item."""
    reward_tensor = torch.zeros_like(r_ids, dtype=torch.float32)
    prompt_length = p_ids.shape[-1]
    for i in range(len(r_ids)):
        item_prompts, item_responses, item_mask = p_ids[i], r_ids[i], attention[i]  # DataProtoItem
        valid_prompt_length = item_mask[:prompt_length].sum()
        valid_prompt_ids = item_prompts[-valid_prompt_length:]
        valid_response_length = item_mask[prompt_length:].sum()
        valid_response_ids = item_responses[:valid_response_length]
        tokenizer.decode(valid_prompt_ids)
        response_str = tokenizer.decode(valid_response_ids)
        score = rewards.gsm8k_like(data_source="openai/gsm8k", solution_str=response_str,
                                   ground_truth=truths[i], extra_info=None)
        reward_tensor[i, valid_response_length - 1] = score
    return reward_tensor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tokenizer = build_tokenizer()
    p_ids, r_ids, attention, truths = build_batch(tokenizer, args.n)
    mask = attention[:, p_ids.shape[-1]:]
    print(f"batch: {args.n} responses, mean {mask.sum(-1).float().mean():.0f} tokens")

    naive_best, ours_best = float("inf"), float("inf")
    cfg = {"path": str(HERE / "rewards.py"), "name": "gsm8k_like", "executor": "local"}
    with Scorer.from_config(cfg) as scorer:
        for _ in range(args.repeat):
            began = time.perf_counter()
            expected = naive_manager(tokenizer, p_ids, r_ids, attention, truths)
            naive_best = min(naive_best, time.perf_counter() - began)
            began = time.perf_counter()
            _, token_rewards = score_responses(scorer, tokenizer, r_ids, mask, ["openai/gsm8k"] * args.n, truths)
            ours_best = min(ours_best, time.perf_counter() - began)
    assert torch.equal(expected, token_rewards.token_level_scores), "the two paths disagree"
    print(f"  verl NaiveRewardManager loop   {naive_best / args.n * 1e6:7.1f} us/item")
    print(f"  verl-rewards score_responses   {ours_best / args.n * 1e6:7.1f} us/item  "
          f"({naive_best / ours_best:.1f}x faster, same tensor)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
