"""The paper's numbers (Dubois et al., 2023), to put beside ours. Nothing here is measured by us."""

#: Table 2: win-rate (%) against Davinci003, simulated (p_sim^eval) and human (p_human).
TABLE2 = {
    "GPT-4": (79.0, 69.8),
    "ChatGPT": (61.4, 52.9),
    "PPO": (46.8, 55.1),
    "DPO": (46.8, None),
    "Best-of-1024": (45.0, 50.7),
    "Expert iteration": (41.9, 45.7),
    "SFT 52k": (39.2, 40.7),
    "SFT 10k": (36.7, 44.3),
    "Binary FeedME": (36.6, 37.9),
    "Quark": (35.6, None),
    "Binary reward conditioning": (32.4, None),
    "Davinci001": (24.4, 32.5),
    "LLaMA 7B (base)": (11.3, 6.5),
}

#: Average output length in characters (Section 5 and Appendix E.3).
LENGTHS = {"SFT 10k": 278, "Best-of-16": 571, "PPO": 637}

#: Alpaca 52k splits and the evaluation set.
SPLITS = {"sft": 10_000, "preference": 10_000, "unlabeled": 20_000, "val": 2_000, "eval": 805}

#: Annotators on the paper's validation set (Sections 3.2, 4; Figs 4, 7, 9). Ranges as (low, high).
ANNOTATORS = {
    "human": {"agreement": (65.7, 66.0), "variance": (0.34, 0.35), "p_longer": (0.62, 0.64),
              "p_list": (0.60, 0.69), "cost_per_1000": 300.0, "seconds_per_1000": 36_800},
    "p_sim_eval": {"agreement": 65.0, "variance": 0.26, "p_longer": 0.64, "p_list": 0.63, "cost_per_1000": 12.0},
    "p_sim_ann": {"variance": 0.43, "cost_per_1000": 6.0},
    "p_sim_single": {"agreement": 66.4, "variance": (0.10, 0.19), "p_longer": 0.60, "p_list": 0.65,
                     "cost_per_1000": 15.0},
}
