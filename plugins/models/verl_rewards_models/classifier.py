"""``hf_reward_model``: a sequence-classification reward model, batched, on the worker's device.

One :class:`HFRewardModel` per worker process loads the model once (from a
local folder, or a model id found in the user's own Hugging Face cache; it
never downloads unless ``allow_download`` is set) onto the worker's device:
the GPU Ray assigned it (``reward.worker_num_gpus``), else the CPU. Each batch
call formats prompt + response, pads to the longest in each mini-batch of
``batch_size`` and returns the logit of the model's single label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verl_rewards import reward

from .prompts import Prompt, prompt_messages, prompt_text
from .tiny import SELF_TEST_MODEL, self_test_model_path

_SELF_TEST = {"model_path": SELF_TEST_MODEL}


@reward(
    description="A Hugging Face sequence-classification reward model (one label) over "
                "prompt + response through the tokenizer's chat template; the score is its logit "
                "(sigmoid with normalize=true).",
    tags=("model", "reward-model"),
    examples=[
        {"solution_str": "4", "ground_truth": "", "prompt": "2+2?", "expected": 0.0, "kwargs": _SELF_TEST},
        {"solution_str": "4", "ground_truth": "", "prompt": [{"role": "user", "content": "2+2?"}],
         "expected": 0.5, "kwargs": {**_SELF_TEST, "normalize": True}},
    ],
)
class HFRewardModel:
    """Score responses with the classifier at ``model_path``."""

    def __init__(
        self,
        model_path: str,
        max_length: int = 2048,
        batch_size: int = 8,
        normalize: bool = False,
        device: str | None = None,
        dtype: str | None = None,
        allow_download: bool = False,
    ) -> None:
        import torch
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        if max_length < 2 or batch_size < 1:
            raise ValueError(f"hf_reward_model: max_length must be >= 2 and batch_size >= 1, "
                             f"not {max_length} and {batch_size}")
        source = str(self_test_model_path()) if model_path == SELF_TEST_MODEL else model_path
        self.model_path = model_path
        self.max_length = max_length
        self.batch_size = batch_size
        self.normalize = normalize
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        local = not allow_download
        self.tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local)
        self.tokenizer.truncation_side = "left"  # keep the end of the response
        self.tokenizer.padding_side = "right"  # real tokens keep their positions
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        config = AutoConfig.from_pretrained(source, local_files_only=local)
        if config.num_labels != 1:
            raise ValueError(f"hf_reward_model: {model_path} has {config.num_labels} labels; "
                             f"a reward model has exactly one")
        kwargs: dict[str, Any] = {"local_files_only": local}
        if dtype is not None:
            kwargs["dtype"] = getattr(torch, dtype)
        model = AutoModelForSequenceClassification.from_pretrained(source, config=config, **kwargs)
        if model.config.pad_token_id is None:
            model.config.pad_token_id = self.tokenizer.pad_token_id
        self.model = model.to(self.device).eval()
        self._templated = bool(getattr(self.tokenizer, "chat_template", None))
        self._torch = torch

    def __call__(
        self, data_sources: Sequence[str], solution_strs: Sequence[str], ground_truths: Sequence[Any],
        extra_infos: Sequence[Any], prompts: Sequence[Prompt | None],
    ) -> list[float]:
        ids = [self.encode(p, r) for p, r in zip(prompts, solution_strs)]
        scores: list[float] = []
        for start in range(0, len(ids), self.batch_size):
            scores.extend(self._forward(ids[start : start + self.batch_size]))
        return scores

    def encode(self, prompt: Prompt | None, response: str) -> list[int]:
        """Token ids for one sample: the chat template over user = prompt and
        assistant = response when the tokenizer has one (and there is a prompt),
        else ``prompt + "\\n" + response``; the last ``max_length`` tokens."""
        if self._templated and prompt is not None:
            messages = [*prompt_messages(prompt), {"role": "assistant", "content": response}]
            text = self.tokenizer.apply_chat_template(messages, tokenize=False)
            special = False  # the template writes the special tokens itself
        else:
            text = response if prompt is None else prompt_text(prompt) + "\n" + response
            special = True
        encoded = self.tokenizer(text, add_special_tokens=special, truncation=True, max_length=self.max_length)
        return list(encoded["input_ids"])

    def close(self) -> None:
        """Release the model (and the GPU memory it held)."""
        self.model = None
        if self.device.type == "cuda":
            self._torch.cuda.empty_cache()

    def _forward(self, ids: list[list[int]]) -> list[float]:
        if self.model is None:
            raise RuntimeError(f"hf_reward_model ({self.model_path}) is closed")
        batch = self.tokenizer.pad({"input_ids": ids}, padding=True, return_tensors="pt").to(self.device)
        with self._torch.inference_mode():
            logits = self.model(**batch).logits[:, 0].float()
        if self.normalize:
            logits = self._torch.sigmoid(logits)
        return [float(x) for x in logits.cpu()]
