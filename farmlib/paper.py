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

#: Average output length in characters of models trained on simulated preferences (Appendix E, Table 7).
LENGTHS_SIM = {
    "GPT-4": 504.4, "ChatGPT": 333.4, "Davinci001": 286.3, "SFT 52K": 383.2, "SFT 10K": 277.5, "LLaMA 7B": 950.5,
    "PPO 80 steps": 863.4, "PPO 20 steps": 637.7, "Best-of-128": 704.7, "Best-of-16": 570.5, "Best-of-4": 483.3,
    "ExpIter-128": 527.5, "ExpIter-16": 458.3, "ExpIter-4": 407.4,
}

#: The same for models trained on human preferences (Table 6).
LENGTHS_HUMAN = {
    "GPT-4": 504.4, "ChatGPT": 333.4, "Davinci001": 286.3, "SFT 52K": 383.2, "SFT 10K": 277.5, "LLaMA 7B": 950.5,
    "PPO 200 steps": 495.6, "PPO 80 steps": 623.7, "PPO 40 steps": 683.1, "Best-of-128": 680.0, "Best-of-16": 565.2,
    "Best-of-4": 478.7, "ExpIter-128": 524.7, "ExpIter-16": 458.3, "ExpIter-4": 422.1, "FeedMe": 371.4,
}

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

#: The bands our simulated people are held to on pairs of SFT outputs (issue 10): the human row above, widened by
#: a tolerance. Ours, not the paper's; (low, high), agreement in %.
CROWD_RANGES = {"agreement": (63.0, 69.0), "variance": (0.30, 0.40), "p_longer": (0.58, 0.68), "p_list": (0.58, 0.72)}

#: Section 4.2 (Figure 3): agreement of method rankings, trained and evaluated in simulation vs on people, over all
#: its rows (GPT-4, ChatGPT, Davinci001, LLaMA 7B and Alpaca 7B among them, models it did not train).
END_TO_END = {"spearman": 0.98}
#: The same without the five models it did not train (Figure 3's caption).
END_TO_END_METHODS = {"spearman": 0.94, "r2": 0.83}

#: Table 4: win-rate (%) under people of models trained on people's, the single judge's and the pool's labels.
TRANSFER = {"PPO (people)": 55.0, "Best-of-16 (people)": 51.0, "PPO (single GPT-4 judge)": 50.0, "SFT 10k": 44.0,
            "PPO (p_sim_ann)": 43.0}
