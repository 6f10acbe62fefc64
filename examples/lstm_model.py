"""The word-level LSTM language model of PyTorch's examples/word_language_model: the model of
examples/lstm_lm.py and of the LSTM half of benchmarks/bench_sequence_quality.py.

This file imports minigrad and nothing else of the project, under the names a PyTorch user types
(`mg`, `nn`, `F`): rename `minigrad` to `torch` and the same code runs under PyTorch, which is how
tests/test_sequence_examples.py checks the port (same loss at step 0 from the same weights) and how
the quality benchmark runs its PyTorch peer.

Embedding -> dropout -> nn.LSTM (num_layers, dropout between the layers) -> dropout -> Linear decoder
-> log_softmax, input and output (seq, batch) as PyTorch's example (not batch-first). The embedding
and the decoder's weight are drawn uniform(-0.1, 0.1), the decoder's bias zero, the LSTM keeps its
own default init (uniform(+-1/sqrt(hidden))), all as PyTorch's example. ``tie_weights``: the decoder
shares the embedding's weight (Press & Wolf 2016, Inan et al. 2016), which needs emb_size == hidden.
"""
import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F


class RNNModel(nn.Module):
    """Encoder, recurrent module, decoder (PyTorch's word_language_model RNNModel, LSTM and GRU only)."""

    def __init__(self, ntoken, ninp=200, nhid=200, nlayers=2, dropout=0.2, tie_weights=False, rnn_type="LSTM"):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        """input (seq, batch) of token ids, hidden from init_hidden or the previous segment ->
        (log-probabilities (seq * batch, ntoken), the new hidden state)."""
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        """Zero states for a batch of bsz: (h, c) for an LSTM, h for a GRU."""
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history (truncated BPTT)."""
    if isinstance(h, mg.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)
